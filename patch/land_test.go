package patch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// Only an accepted verdict lands (a needs-human-review one only when a
// person says they reviewed it): a patch with no verdict, or judged
// anything else, is refused by policy with the branch as it was, and so is
// landing into a dirty working tree. The verdicts here are recorded
// entries, as a verdict records them: what lands is decided by the ledger,
// not by how the verdict was reached.
func TestOnlyAnAcceptedPatchLands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := newFixture(t, map[string]fileSpec{"hone.toml": {"100644", fixtureToml}, "targets/t/lib.go": {"100644", libGo}})
	testgit.Git(t, ws.Root, "reset", "-q", "--hard", "main")
	pin := testgit.Git(t, ws.Root, "rev-parse", "HEAD")
	lib := func(n string) string { return strings.Replace(libGo, "return 1", "return "+n, 1) }

	for i, tc := range []struct {
		verdict string // "" for none
		want    string
	}{
		{"", "has no trusted verdict; run `hone verdict"},
		{ledger.VerdictRejectedBench, "was judged rejected-bench; only an accepted patch lands"},
		{ledger.VerdictRejectedGate, "was judged rejected-gate; only an accepted patch lands"},
		{ledger.VerdictError, "was judged error; only an accepted patch lands"},
		{ledger.VerdictNeedsHumanReview, "review it, then land it with --reviewed"},
	} {
		res, err := proposeFile(t, ws, "A", 3, "idea "+tc.verdict, lib(string(rune('2'+i))))
		if err != nil {
			t.Fatal(err)
		}
		if tc.verdict != "" {
			judge(t, ws, res.Proposal, tc.verdict)
		}
		_, err = Land(ctx, ws, res.PatchID, LandOptions{})
		if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("landing a patch judged %q: %v; want a refusal saying %q", tc.verdict, err, tc.want)
		}
		if head := testgit.Git(t, ws.Root, "rev-parse", "HEAD"); head != pin {
			t.Fatalf("a refused landing moved main to %s", head)
		}
	}

	res, err := proposeFile(t, ws, "A", 3, "ten is enough", lib("10"))
	if err != nil {
		t.Fatal(err)
	}
	vid := judge(t, ws, res.Proposal, ledger.VerdictAccepted)
	scratch := filepath.Join(ws.Root, "targets/t/lib.go")
	if err := os.WriteFile(scratch, []byte(libGo+"// scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Land(ctx, ws, res.PatchID, LandOptions{}); !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "uncommitted changes") {
		t.Errorf("landing into a dirty tree: %v; want a refusal", err)
	}
	testgit.Git(t, ws.Root, "checkout", "-q", "--", ".")

	landed, err := Land(ctx, ws, res.PatchID, LandOptions{})
	if err != nil {
		t.Fatalf("landing an accepted patch: %v", err)
	}
	msg := testgit.Git(t, ws.Root, "log", "-1", "--format=%an <%ae>%n%B")
	if landed.Branch != "main" || landed.Verdict != ledger.VerdictAccepted || !strings.Contains(msg, "Hone-Patch: "+res.PatchID) || !strings.Contains(msg, "Hone-Verdict: "+vid+" accepted") {
		t.Errorf("landed %+v as:\n%s", landed, msg)
	}
	if _, err := Land(ctx, ws, res.PatchID, LandOptions{}); !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "already has the change") {
		t.Errorf("landing it again: %v; want a refusal", err)
	}
}
