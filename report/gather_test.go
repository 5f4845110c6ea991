package report

import (
	"context"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/workspace"
)

// A pin the protected base holds and an agent's own commit that it does
// not: the report tells them apart, and dates each.
func TestPinsTellTheBaseFromAnAgentsOwnCommit(t *testing.T) {
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, map[string]string{"hone.toml": "[targets.t]\npin = \"main\"\n", "targets/t/a.c": "int a;\n"})
	onMain := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.Git(t, dir, "checkout", "-q", "-b", "agent/t/x")
	testgit.WriteFiles(t, dir, map[string]string{"targets/t/a.c": "int a, b;\n"})
	testgit.Git(t, dir, "commit", "-q", "-am", "own")
	own := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.Git(t, dir, "checkout", "-q", "main")
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pins(context.Background(), ws, []Attempt{{Pin: onMain}, {Pin: own}, {Pin: onMain}, {Pin: "0123456789012345678901234567890123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := got[onMain]; !p.OnBase || p.Date.IsZero() || len(p.BaseRefs) != 1 || p.BaseRefs[0] != "refs/heads/main" {
		t.Errorf("pin on main: %+v", p)
	}
	if p := got[own]; p.OnBase || p.Date.IsZero() {
		t.Errorf("the agent's own pin: %+v", p)
	}
	if p := got["0123456789012345678901234567890123456789"]; p.OnBase || !p.Date.IsZero() {
		t.Errorf("a pin this clone lacks: %+v", p)
	}
}
