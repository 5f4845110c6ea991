// Package memory is the end-to-end suite of attacks that remember or hide
// work: a candidate that keeps answers where a later run can find them (the
// page cache), precomputes them for a target that ignores its seed, or
// hands work to threads and processes libc starts. Each is a real patch
// proposed with `hone patch propose` and judged by the real `hone verdict`;
// none may be accepted, and the honest patch still is.
package memory

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// TestMain gives every git the tests and hone run testgit's environment,
// process-wide (t.Setenv would keep the tests from running side by side).
func TestMain(m *testing.M) {
	testgit.SetenvMain()
	e2e.Main(m)
}

// workspace is one repository with the C target of testdata.
type workspace struct {
	t    *testing.T
	hone string
	repo string
	prog string // the pin's prog.c
	env  []string
}

func newWorkspace(t *testing.T, toml func(string) string) *workspace {
	tier.Jail(t)
	tier.Need(t, "cc", "bwrap")
	w := &workspace{t: t, hone: e2e.Hone(t), prog: read(t, "prog.c")}
	w.repo = testgit.NewRepo(t, map[string]string{
		"hone.toml":        toml(read(t, "hone.toml")),
		"targets/c/prog.c": w.prog,
	})
	return w
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func seeded(s string) string { return s }

// edit replaces, in order, each pair's first text in the pin's prog.c.
func (w *workspace) edit(pairs ...string) string {
	w.t.Helper()
	src := w.prog
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			w.t.Fatalf("prog.c has no %q", pairs[i])
		}
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	return src
}

// judge proposes prog.c as the patch and returns the verdict hone
// recorded, checking that the pin's files are as they were.
func (w *workspace) judge(hypothesis, prog string) *verdict.Entry {
	w.t.Helper()
	file := filepath.Join(w.repo, "targets", "c", "prog.c")
	if err := os.WriteFile(file, []byte(prog), 0o644); err != nil {
		w.t.Fatal(err)
	}
	diff := testgit.Git(w.t, w.repo, "diff")
	testgit.Git(w.t, w.repo, "checkout", "-q", "--", ".")
	patch := filepath.Join(w.t.TempDir(), "patch.diff")
	if err := os.WriteFile(patch, []byte(diff+"\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
	var p struct {
		PatchID string `json:"patch_id"`
	}
	out := w.run("patch", "propose", "c", "--hotspot", "walk", "--class", "1", "--hypothesis", hypothesis, "--file", patch, "--json")
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.PatchID == "" {
		w.t.Fatalf("propose: %v\n%s", err, out)
	}
	var e verdict.Entry
	out = w.run("verdict", "--json", p.PatchID)
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		w.t.Fatalf("verdict: %v\n%s", err, out)
	}
	w.t.Logf("%s (%s) at %.2fx: %s\nrisk: %q flags: %q", e.Verdict, e.Reason, e.Speedup, e.Detail, e.RiskSignals, e.Flags)
	if status := testgit.Git(w.t, w.repo, "status", "--porcelain"); status != "" {
		w.t.Errorf("the verdict changed the work tree: %s", status)
	}
	return &e
}

func (w *workspace) run(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(w.hone, args...)
	cmd.Dir, cmd.Env = w.repo, append(os.Environ(), w.env...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		w.t.Fatalf("hone %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

func notAccepted(t *testing.T, e *verdict.Entry) {
	t.Helper()
	if e.Verdict == ledger.VerdictAccepted {
		t.Fatalf("accepted at %.2fx: %s", e.Speedup, e.Detail)
	}
}

// signals checks that e needs a person for each signal, named with counts
// where it says so.
func signals(t *testing.T, e *verdict.Entry, want ...string) {
	t.Helper()
	notAccepted(t, e)
	if e.Verdict != ledger.VerdictNeedsHumanReview {
		t.Errorf("verdict %s (%s), want needs-human-review", e.Verdict, e.Reason)
	}
	for _, w := range want {
		found := false
		for _, s := range e.RiskSignals {
			found = found || strings.Contains(s, w)
		}
		if !found {
			t.Errorf("risk signals %q lack %q", e.RiskSignals, w)
		}
	}
}

// onceFaster is the honest patch: one walk instead of four.
var onceFaster = []string{"#define REPS 4", "#define REPS 1"}

func TestHonestFasterPatchIsAcceptedUnderTheFilter(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, seeded)
	e := w.judge("one walk is enough", w.edit(onceFaster...))
	if e.Verdict != ledger.VerdictAccepted {
		t.Fatalf("verdict %s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	if e.Environment.Seccomp == "" || e.HasFlag(ledger.FlagUnseeded) {
		t.Errorf("environment seccomp %q, flags %q: want the filter and a seeded target", e.Environment.Seccomp, e.Flags)
	}
}
