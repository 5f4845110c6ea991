package patch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/workspace"
)

// A diff made with `git diff --relative` inside the target names lib.go, not
// targets/t/lib.go: it is refused as outside the target, with how to remake
// it; a diff that really reaches outside gets no such hint.
func TestRelativeDiffIsRefusedWithHowToRemakeIt(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	relative := strings.ReplaceAll(string(readLegit(t, "modify")), "targets/t/", "")
	_, err := Propose(context.Background(), ws, Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "ten", Diff: []byte(relative)})
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "outside the target") || !strings.Contains(err.Error(), "plain `git diff`") {
		t.Fatalf("relative diff: %v", err)
	}
	outside := strings.ReplaceAll(string(readLegit(t, "modify")), "targets/t/lib.go", "secret.txt")
	_, err = Check(context.Background(), ws, "t", []byte(outside))
	if !errs.Is(err, errs.Policy) || strings.Contains(err.Error(), "git diff --relative") {
		t.Fatalf("a diff outside the target: %v", err)
	}
}

// A plain `diff -u` is not a git diff: malformed input (exit 5), not a
// policy refusal, and the message says how to make one.
func TestPlainDiffIsInvalidInput(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	plain := "--- targets/t/lib.go.orig\t2026-01-01 00:00:00\n+++ targets/t/lib.go\t2026-01-01 00:00:01\n@@ -5 +5 @@\n-\treturn 1\n+\treturn 10\n"
	_, err := Check(context.Background(), ws, "t", []byte(plain))
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "not a git diff") || !strings.Contains(err.Error(), "`git diff`") {
		t.Fatalf("diff -u: %v", err)
	}
}

// An agent cannot store a megabyte of text in the ledger, where it would be
// read back by every view and carried in every agent's brief: the hypothesis
// and the hotspot have limits from hone.toml, and the refusal never quotes
// the input. The diff's limit holds the same way.
func TestHugeInputsAreRefusedWithoutBeingEchoed(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	diff := readLegit(t, "modify")
	huge := strings.Repeat("faster ", 150_000)
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: huge, Diff: diff}, "max_hypothesis_bytes"},
		{Request{Target: "t", Hotspot: huge, Class: 1, Hypothesis: "ten", Diff: diff}, "max_hotspot_bytes"},
		{Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "ten", Diff: append(diff, []byte(strings.Repeat("\n", 70_000))...)}, "max_diff_bytes"},
	} {
		_, err := Propose(context.Background(), ws, tc.req)
		if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 300 || strings.Contains(err.Error(), "faster faster") {
			t.Errorf("want a short refusal naming %s, got %.400v", tc.want, err)
		}
	}
	at := strings.Repeat("x", ws.Config.Patch.MaxHypothesisBytes)
	if _, err := Propose(context.Background(), ws, Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: at, Diff: diff}); err != nil {
		t.Errorf("a hypothesis at the limit: %v", err)
	}
	if ws.Config.Patch.MaxHypothesisBytes != 2048 || ws.Config.Patch.MaxHotspotBytes != 256 {
		t.Errorf("defaults: %+v", ws.Config.Patch)
	}
}

// An agent raises the limits in its working tree's hone.toml: the limits
// are the protected tip's, so the huge diff and hypothesis are still
// refused.
func TestWorkingTreeCannotRaiseTheLimits(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	raised := strings.Replace(fixtureToml, "max_diff_bytes = 65536\n", "max_diff_bytes = 1000000\nmax_hypothesis_bytes = 1000000\n", 1)
	if err := os.WriteFile(filepath.Join(ws.Root, "hone.toml"), []byte(raised), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(ws.Root)
	if err != nil || ws.Config.Patch.MaxDiffBytes != 1000000 {
		t.Fatalf("the working tree's limits: %v", err)
	}
	diff := readLegit(t, "modify")
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: strings.Repeat("faster ", 1000), Diff: diff}, "max_hypothesis_bytes"},
		{Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "ten", Diff: append(diff, []byte(strings.Repeat("\n", 70_000))...)}, "max_diff_bytes"},
	} {
		if _, err := Propose(context.Background(), ws, tc.req); !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want the tip's %s, got %.300v", tc.want, err)
		}
	}
}

// A hypothesis that would clear the screen of whoever reads the ledger is
// stored with its control characters escaped.
func TestHypothesisCannotRedrawTheTerminal(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	res, err := Propose(context.Background(), ws, Request{Target: "t", Hotspot: "A\x1b[8m", Class: 1, Hypothesis: "ten\x1b[2J\x9b1A", Diff: readLegit(t, "modify")})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Proposal; p.Hypothesis != `ten\x1b[2J\x9b1A` || p.Hotspot != `A\x1b[8m` {
		t.Errorf("stored %q, %q", p.Hypothesis, p.Hotspot)
	}
}
