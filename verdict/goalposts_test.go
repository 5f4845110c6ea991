package verdict

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// An agent with a shell deletes the gates from its working tree's
// hone.toml, then asks for a verdict on a wrong answer: the gates come from
// the pin's commit, so the wrong answer is still caught, and the verdict
// says the working tree's file changed nothing.
func TestUncommittedGateDeletionCannotPassAWrongAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	i := strings.Index(cToml, "  [[targets.c.gates]]")
	j := strings.Index(cToml, "  [targets.c.bench]")
	if err := os.WriteFile(filepath.Join(f.ws.Root, "hone.toml"), []byte(cToml[:i]+cToml[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(f.ws.Root)
	if err != nil || len(ws.Config.Targets["c"].Gates) != 0 {
		t.Fatalf("the working tree's hone.toml: %v", err)
	}
	f.ws = ws
	id := "a7a7a7a7a7a7a7a7"
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace(`printf("%llu\n", r)`, `printf("%llu\n", r + 1)`)}), id, "off by one")
	var warned []errs.Warning
	e, err := Run(context.Background(), ws, id, Options{Warnings: func(w errs.Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	if g := e.Gates[len(e.Gates)-1]; g.Name != "golden" || e.ConfigBlob == "" || e.PinUnprotected {
		t.Errorf("gate %s, config blob %q, unprotected %v", g.Name, e.ConfigBlob, e.PinUnprotected)
	}
	if len(warned) != 1 || warned[0].Code != "uncommitted_config" {
		t.Errorf("warnings %+v", warned)
	}
}

// An agent commits a hone.toml without gates on a branch of its own and
// writes a proposal pinned there: the protected tip never named that pin,
// so the verdict is error (stale-pin), flagged, and nothing of it ran.
func TestAgentCommitAsPinIsStale(t *testing.T) {
	t.Parallel()
	f := newRepo(t, "ctarget", "c", cToml)
	root := f.ws.Root
	i := strings.Index(cToml, "  [[targets.c.gates]]")
	j := strings.Index(cToml, "  [targets.c.bench]")
	scratch := testgit.Cmd{Dir: root, Env: []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}}
	scratch.Git(t, "read-tree", f.pin)
	blob := testgit.Cmd{Dir: root, Stdin: cToml[:i] + cToml[j:]}.Git(t, "hash-object", "-w", "--stdin")
	scratch.Git(t, "update-index", "--cacheinfo", "100644,"+blob+",hone.toml")
	agent := testgit.Git(t, root, "commit-tree", scratch.Git(t, "write-tree"), "-p", f.pin, "-m", "no gates")
	testgit.Git(t, root, "update-ref", "refs/heads/agent/c/x", agent)
	f.pin = agent
	id := "b8b8b8b8b8b8b8b8"
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), id, "one walk")
	plan, err := Plan(context.Background(), f.ws, id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Run(context.Background(), f.ws, id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictError, workspace.ReasonStalePin)
	if plan.Outcome != "refuse" || plan.Reason != e.Reason || plan.Detail != e.Detail {
		t.Fatalf("the dry run said %s (%s: %s), the verdict recorded %s: %s", plan.Outcome, plan.Reason, plan.Detail, e.Reason, e.Detail)
	}
	if !e.HasFlag(ledger.FlagStalePin) || len(e.Gates) != 0 || e.Started != "" || !strings.Contains(e.Detail, "never the current pin") {
		t.Fatalf("flags %v, gates %+v, started %q: %s", e.Flags, e.Gates, e.Started, e.Detail)
	}
}
