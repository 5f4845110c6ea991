package patch

import (
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
)

// An "evil merge" adds a file outside the target that neither parent has; a
// first-parent diff against one side would still show it, but only the
// check against each parent proves the merge itself made no other change.
func TestGuardCommitsChecksEveryParent(t *testing.T) {
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	pin := testgit.Git(t, ws.Root, "rev-parse", "main")
	allow := ws.Config.Targets["t"].Rules()
	good := commitEffects(t, ws, pin, []string{`add 100644 "targets/t/fast.go"`})
	side := commitEffects(t, ws, pin, []string{`add 100644 "targets/t/other.go"`})
	flat := flatTree(t, ws.Root, good)
	flat["targets/t/other.go"] = flatTree(t, ws.Root, side)["targets/t/other.go"]
	clean := testgit.Cmd{Dir: ws.Root, Stdin: "merge\n"}.Git(t, "commit-tree", buildTree(t, ws.Root, flat), "-p", good, "-p", side)
	if vs, err := GuardCommits(ctx, ws.Root, allow, pin+".."+clean); err != nil || len(vs) != 0 {
		t.Fatalf("clean merge: %v %v", vs, err)
	}
	flat["secret.txt"] = flatTree(t, ws.Root, good)["targets/t/fast.go"]
	evil := testgit.Cmd{Dir: ws.Root, Stdin: "merge\n"}.Git(t, "commit-tree", buildTree(t, ws.Root, flat), "-p", good, "-p", side)
	vs, err := GuardCommits(ctx, ws.Root, allow, pin+".."+evil)
	if err != nil || len(vs) != 2 || vs[0].Path != "secret.txt" || vs[0].Parent != good || vs[1].Parent != side {
		t.Fatalf("evil merge: want secret.txt against both parents, got %v %v", vs, err)
	}
	if !strings.Contains(vs[0].String(), "against parent") {
		t.Fatalf("violation text: %s", vs[0])
	}
}

func TestGuardRefsOnlyGuardsConfiguredRefs(t *testing.T) {
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	pin := testgit.Git(t, ws.Root, "rev-parse", "main")
	bad := commitEffects(t, ws, pin, []string{`add 100644 "secret.txt"`})
	ups := []RefUpdate{
		{Ref: "refs/heads/feature", Old: zeroHash, New: bad},
		{Ref: "refs/heads/agent/t/x", Old: bad, New: zeroHash},
	}
	if vs, err := GuardRefs(ctx, ws.Root, ws.Config, ups, "--all"); err != nil || len(vs) != 0 {
		t.Fatalf("unguarded ref or deletion checked: %v %v", vs, err)
	}
	vs, err := GuardRefs(ctx, ws.Root, ws.Config, []RefUpdate{{Ref: "refs/heads/agent/nosuch/x", Old: zeroHash, New: bad}}, "--all")
	if err != nil || len(vs) != 1 || !strings.Contains(vs[0].Rule, "does not define") {
		t.Fatalf("unknown target: %v %v", vs, err)
	}
	// The target's own ref pattern is checked against t2's allowlist.
	vs, err = GuardRefs(ctx, ws.Root, ws.Config, []RefUpdate{{Ref: "refs/heads/agent/t2/x", Old: zeroHash, New: commitEffects(t, ws, pin, []string{`add 100644 "targets/t/fast.go"`})}}, "--all")
	if err != nil || len(vs) != 1 {
		t.Fatalf("t's path pushed as t2: %v %v", vs, err)
	}
}

func TestReadHookInput(t *testing.T) {
	ups, err := ReadPrePush(strings.NewReader("refs/heads/x 1111 refs/heads/agent/t/x 0000\n\n"))
	if err != nil || len(ups) != 1 || ups[0].Ref != "refs/heads/agent/t/x" || ups[0].New != "1111" || ups[0].Old != "0000" {
		t.Fatalf("pre-push: %+v %v", ups, err)
	}
	if _, err := ReadPreReceive(strings.NewReader("a b\n")); err == nil {
		t.Fatal("short pre-receive line accepted")
	}
}
