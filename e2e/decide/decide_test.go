// Package decide holds the end-to-end tests of the bench's per-pair setups
// and its slow-candidate cutoff: the real hone binary proposes and judges
// patches of a small shell target in a temporary repository.
package decide

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// prog is the target: a short loop, then an answer made from its seed, so
// that every pair's output differs and each candidate run must print its
// own pair's answer.
const prog = `#!/bin/sh
i=0
while [ $i -lt 3000 ]; do i=$((i+1)); done
echo "answer $(( ($1 * 7919) % 100003 ))"
`

// config judges in small batches: the subject is the decision, not the
// timing. Batches of 3 up to 6 pairs still plan three looks (3, 5, 6).
// One code layout: the per-pair setups are the subject, not layout, and
// each layout is a build per side.
const config = `[bench]
pairs = 3
max_pairs = 6
layouts = 1

[targets.s]
build = "cp prog.sh $HONE_OUT/prog && chmod +x $HONE_OUT/prog"

  [[targets.s.gates]]
  name = "golden"
  run = "$HONE_OUT/prog {seed}"
  equivalence = true

  [targets.s.bench]
  run = "$HONE_OUT/prog {seed}"
`

type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	tier.Jail(t)
	r := &repo{t: t, dir: t.TempDir()}
	r.write("hone.toml", config)
	r.write("targets/s/prog.sh", prog)
	r.git("init", "-q", "-b", "main")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "the pin")
	return r
}

func (r *repo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@invalid")
	return cmd
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	out, err := r.command("git", args...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (r *repo) hone(args ...string) string {
	r.t.Helper()
	out, err := r.command(e2e.Hone(r.t), args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		r.t.Fatalf("hone %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

// judge proposes prog.sh with body in place of the loop and judges it.
func (r *repo) judge(hypothesis, loop string) *verdict.Entry {
	r.t.Helper()
	r.write("targets/s/prog.sh", strings.Replace(prog, "while [ $i -lt 3000 ]; do i=$((i+1)); done", loop, 1))
	diff := r.git("diff")
	r.git("checkout", "-q", "--", ".")
	r.write("patch.diff", diff)
	var p struct {
		PatchID string `json:"patch_id"`
	}
	out := r.hone("patch", "propose", "s", "--hotspot", "loop", "--class", "1", "--hypothesis", hypothesis, "--file", filepath.Join(r.dir, "patch.diff"), "--json")
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		r.t.Fatalf("propose: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(r.dir, "patch.diff"))
	var e verdict.Entry
	out = r.hone("verdict", p.PatchID, "--json")
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		r.t.Fatalf("verdict: %v\n%s", err, out)
	}
	return &e
}

// A candidate that makes the workload crawl (here: a 20 s sleep in every
// run, where the bench timeout would allow 10 minutes a run, for up to 14
// runs) is stopped at slow_factor times the baseline's median wall time
// and rejected for it: the verdict costs seconds, not the hours the
// timeout allows. The cut is a clock's, so the test is the measurement
// tier's.
func TestMeasureSlowCandidateCostsSecondsNotHours(t *testing.T) {
	tier.Measure(t, "the cut is max(slow_factor x the baseline's median wall, 1 s) with slow_factor 10, and "+
		"the baseline's runs (a 3000-step shell loop, tens of milliseconds) would need a median of 2 s, "+
		"dozens of times their own, before the 20 s candidate ran under the limit: no noise of an idle machine does that")
	t.Parallel()
	r := newRepo(t)
	e := r.judge("sleeping is cheaper than looping", "sleep 20")
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != verdict.ReasonSlow || !strings.Contains(e.Detail, "slow_factor") {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	// The equivalence gate's candidate run sleeps its 20 s (gates have
	// their own timeouts); then one baseline run sets the limit and the
	// candidate's first bench run is cut before its sleep ends, however
	// busy the machine. Without the cut the bench alone would sleep 20 s
	// in each of 7 runs.
	g := e.Gates[len(e.Gates)-1]
	if g.Name != "bench" || g.Candidate == nil || !g.Candidate.TimedOut || g.Candidate.WallSeconds >= 20 {
		t.Errorf("the slow bench run was not cut: %+v %+v", g, g.Candidate)
	}
	if status := r.git("status", "--porcelain"); status != "" {
		t.Errorf("the repository changed: %s", status)
	}
}

// Honest work passes with a fresh input every pair: the outputs differ
// from pair to pair (no longer an error), every candidate run matches its
// own pair's baseline run, and every seed, padding and output is recorded.
// What it holds are the setups and outputs, not a timing: the program
// declares no work, and the decision is no change.
func TestEveryPairGetsAFreshInput(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	e := r.judge("the same loop, spelled differently", "while [ $i -lt 3000 ]; do i=$((i + 1)); done")
	if e.Verdict == ledger.VerdictError || e.Verdict == ledger.VerdictRejectedGate || e.Bench == nil {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	b := e.Bench
	seeds := map[int64]bool{}
	outputs := map[string]bool{}
	for i, s := range append(b.Warmups, b.Setups...) {
		if seeds[s.Seed] || s.Seed <= 0 {
			t.Errorf("setup %d %+v repeats a seed", i, s)
		}
		seeds[s.Seed] = true
	}
	for _, o := range b.Outputs {
		outputs[o] = true
	}
	if len(b.Setups) != b.Pairs || len(b.Outputs) != b.Pairs || len(outputs) < 2 || b.Method != verdict.MethodEquivalence || len(b.Looks) != 3 {
		t.Errorf("bench: %d pairs, setups %+v, %d distinct outputs, method %s, looks %+v", b.Pairs, b.Setups, len(outputs), b.Method, b.Looks)
	}
	for _, g := range e.Gates {
		if g.Name == "golden" && (g.Setup == nil || seeds[g.Setup.Seed]) {
			t.Errorf("gate %s setup %+v", g.Name, g.Setup)
		}
	}
	if out := r.hone("verdict", "show", e.ID); !strings.Contains(out, "looks (") {
		t.Errorf("verdict show does not show the looks:\n%s", out)
	}
}
