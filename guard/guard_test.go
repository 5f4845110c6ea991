package guard

import (
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/workspace"
)

const honeToml = `[guard]
refs = ["refs/heads/agent/<target>/*"]

[targets.t]
path = "targets/t"
pin = "main"
protect = ["testdata/**"]

[targets.t2]
path = "targets/t2"
pin = "main"
`

// newRepo makes a workspace whose main branch holds two targets and a file
// outside both.
func newRepo(t *testing.T) *workspace.Workspace {
	t.Helper()
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, map[string]string{
		"hone.toml":             honeToml,
		"targets/t/a.go":        "package t\n",
		"targets/t/testdata/in": "golden\n",
		"targets/t2/b.go":       "package t2\n",
		"secret.txt":            "secret\n",
	})
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// commitOn makes a commit on base writing files, and returns it. No ref
// names it, as for a commit that arrives with a push; the working tree is
// left on main.
func commitOn(t *testing.T, dir, msg, base string, files map[string]string) string {
	t.Helper()
	testgit.Git(t, dir, "checkout", "-q", "--detach", base)
	testgit.WriteFiles(t, dir, files)
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-q", "-m", msg)
	c := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.Git(t, dir, "checkout", "-q", "main")
	return c
}

// An "evil merge" changes a file outside the target that neither parent
// changed; only the check against each parent proves the merge itself made
// no other change.
func TestCommitsChecksEveryParent(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	dir, allow := ws.Root, ws.Config.Targets["t"].Rules()
	pin := testgit.Git(t, dir, "rev-parse", "main")
	good := commitOn(t, dir, "good", pin, map[string]string{"targets/t/fast.go": "package t\n"})
	side := commitOn(t, dir, "side", pin, map[string]string{"targets/t/other.go": "package t\n"})
	testgit.Git(t, dir, "checkout", "-q", "--detach", good)
	testgit.Git(t, dir, "merge", "-q", "--no-edit", side)
	clean := testgit.Git(t, dir, "rev-parse", "HEAD")
	if vs, err := Commits(ctx, dir, allow, pin+".."+clean); err != nil || len(vs) != 0 {
		t.Fatalf("clean merge: %v %v", vs, err)
	}
	testgit.Git(t, dir, "reset", "-q", "--hard", good)
	testgit.Git(t, dir, "merge", "-q", "--no-commit", side)
	testgit.WriteFiles(t, dir, map[string]string{"secret.txt": "stolen\n"})
	testgit.Git(t, dir, "add", "secret.txt")
	testgit.Git(t, dir, "commit", "-q", "--no-edit")
	evil := testgit.Git(t, dir, "rev-parse", "HEAD")
	vs, err := Commits(ctx, dir, allow, pin+".."+evil)
	if err != nil || len(vs) != 2 || vs[0].Path != "secret.txt" || vs[0].Parent != good || vs[1].Parent != side {
		t.Fatalf("evil merge: want secret.txt against both parents, got %v %v", vs, err)
	}
	if !strings.Contains(vs[0].String(), "against parent") {
		t.Fatalf("violation text: %s", vs[0])
	}
}

const zeroHash = "0000000000000000000000000000000000000000"

func TestPushesOnlyGuardConfiguredRefs(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	dir := ws.Root
	p, err := Load(ctx, ws.Repo)
	if err != nil {
		t.Fatal(err)
	}
	pin := testgit.Git(t, dir, "rev-parse", "main")
	bad := commitOn(t, dir, "bad", pin, map[string]string{"secret.txt": "stolen\n"})
	ups := []RefUpdate{
		{Ref: "refs/heads/feature", Old: zeroHash, New: bad},
		{Ref: "refs/heads/agent/t/x", Old: bad, New: zeroHash},
	}
	if vs, err := p.CheckPush(ctx, ups); err != nil || len(vs) != 0 {
		t.Fatalf("unguarded ref or deletion checked: %v %v", vs, err)
	}
	vs, err := p.CheckPush(ctx, []RefUpdate{{Ref: "refs/heads/agent/nosuch/x", Old: zeroHash, New: bad}})
	if err != nil || len(vs) != 1 || !strings.Contains(vs[0].Rule, "does not define") {
		t.Fatalf("unknown target: %v %v", vs, err)
	}
	// t's path pushed to t2's ref is checked against t2's allowlist.
	inT := commitOn(t, dir, "in-t", pin, map[string]string{"targets/t/fast.go": "package t\n"})
	vs, err = p.CheckPush(ctx, []RefUpdate{{Ref: "refs/heads/agent/t2/x", Old: zeroHash, New: inT}})
	if err != nil || len(vs) != 1 || vs[0].Path != "targets/t/fast.go" || vs[0].Ref != "refs/heads/agent/t2/x" {
		t.Fatalf("t's path pushed as t2: %v %v", vs, err)
	}
	if vs, err := p.CheckPush(ctx, []RefUpdate{{Ref: "refs/heads/agent/t/x", Old: zeroHash, New: inT}}); err != nil || len(vs) != 0 {
		t.Fatalf("t's path pushed as t: %v %v", vs, err)
	}
}

// The laundering attack of issue 14: a commit outside the target, first
// stored on an unguarded branch, then pushed to an agent ref. Only commits
// new to the repository were checked; now every commit the protected base
// does not hold is.
func TestACommitLaunderedThroughAnotherBranchIsChecked(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	dir := ws.Root
	pin := testgit.Git(t, dir, "rev-parse", "main")
	bad := commitOn(t, dir, "readme", pin, map[string]string{"secret.txt": "laundered\n"})
	testgit.Git(t, dir, "branch", "feature", bad)
	good := commitOn(t, dir, "fast", bad, map[string]string{"targets/t/fast.go": "package t\n"})
	p, err := Load(ctx, ws.Repo)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := p.CheckPush(ctx, []RefUpdate{{Ref: "refs/heads/agent/t/x", Old: bad, New: good}})
	if err != nil || len(vs) != 1 || vs[0].Commit != bad || vs[0].Path != "secret.txt" {
		t.Fatalf("the laundered commit: %v %v", vs, err)
	}
}

// The worktree-config attack of issue 14: a widened hone.toml in the working
// tree changes nothing the guards read.
func TestAWidenedWorkingTreeConfigChangesNoRule(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	testgit.WriteFiles(t, ws.Root, map[string]string{"hone.toml": "[targets.t]\npath = \".\"\npin = \"main\"\n"})
	p, err := Load(ctx, ws.Repo)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := p.Target("t")
	if err != nil || tg.Path != "targets/t" || len(tg.Protect) != 1 {
		t.Fatalf("target t as the guards read it: %+v %v", tg, err)
	}
}

func TestStagedChecksTheIndex(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	allow := ws.Config.Targets["t"].Rules()
	testgit.WriteFiles(t, ws.Root, map[string]string{"targets/t/a.go": "package t // faster\n", "targets/t/testdata/in": "rigged\n"})
	testgit.Git(t, ws.Root, "add", "targets/t/a.go")
	if vs, err := Staged(ctx, ws.Root, allow); err != nil || len(vs) != 0 {
		t.Fatalf("a staged change inside the target: %v %v", vs, err)
	}
	testgit.Git(t, ws.Root, "add", "targets/t/testdata/in")
	vs, err := Staged(ctx, ws.Root, allow)
	if err != nil || len(vs) != 1 || vs[0].Path != "targets/t/testdata/in" || !strings.Contains(vs[0].Rule, "protected") {
		t.Fatalf("a staged protected file: %v %v", vs, err)
	}
	if err := Violated(vs); err == nil || !strings.Contains(err.Error(), "1 violation(s) of the guards' rules") {
		t.Fatalf("Violated: %v", err)
	}
}

func TestReadHookInput(t *testing.T) {
	ups, err := ReadPrePush(strings.NewReader("refs/heads/x 1111 refs/heads/agent/t/x 0000\n\n"))
	if err != nil || len(ups) != 1 || ups[0].Ref != "refs/heads/agent/t/x" || ups[0].New != "1111" || ups[0].Old != "0000" {
		t.Fatalf("pre-push: %+v %v", ups, err)
	}
	if _, err := ReadRefUpdates(strings.NewReader("a b\n")); err == nil {
		t.Fatal("short pre-receive line accepted")
	}
}

func TestTargetOf(t *testing.T) {
	pats := []string{"refs/heads/agent/<target>/*", "refs/heads/<target>-opt"}
	for _, c := range []struct {
		ref, target string
		ok          bool
	}{
		{"refs/heads/agent/wf/try1", "wf", true},
		{"refs/heads/agent/wf/deep/er", "wf", true},
		{"refs/heads/wf-opt", "wf", true},
		{"refs/heads/main", "", false},
		{"refs/heads/agent/wf", "", false},
		{"refs/tags/agent/wf/x", "", false},
	} {
		got, ok := TargetOf(pats, c.ref)
		if got != c.target || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.ref, got, ok, c.target, c.ok)
		}
	}
}
