//go:build hone_realworld

package realgo

import (
	"bytes"
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// independentRounds is how many times the independent measurement runs
// each side's whole benchmark set, the sides alternating.
const independentRounds = 10

// slowdown makes Sum64String hash its input twice: the deciding
// Sum64String benchmarks cost up to twice as much, the rest as before.
var slowdown = []struct{ file, after, before string }{
	{"xxhash_unsafe.go", "\tbh.Cap = len(s)\n\tSum64(b)\n\treturn Sum64(b)", "\tbh.Cap = len(s)\n\treturn Sum64(b)"},
}

// The real module judged on the clock, with the configuration hone init
// writes: the upstream inlining change is faster, each benchmark it was
// decided faster on holding in its interval what go test -bench and
// benchstat's statistics measure of it outside hone, and a slowdown is
// rejected, each verdict in under five minutes.
func TestMeasureXXHashInliningIsFasterAndASlowdownRejected(t *testing.T) {
	tier.Measure(t, "the inlining change makes Sum64String/4B about 1.4x faster (measured outside hone), twenty times "+
		"the width of its interval at twenty pairs on an idle machine, so its decision at its Bonferroni share of the "+
		"rates (0.05% one-sided at sixteen benchmarks) fails only through the design's type II error, which that "+
		"margin makes vanishing; the slowdown doubles the Sum64String benchmarks' work, a regression of up to half, "+
		"many times their intervals' widths; the independent figures are medians of ten rounds per side, whose own "+
		"error is a fraction of hone's interval at its family level (99.7% or more)")
	tier.Need(t, "go", "bwrap", "git")
	w := newWorld(t, nil)
	// Each subtest judges one patch; they share the repository and run
	// one after the other, each verdict alone on the machine.
	judge := func(t *testing.T, hypothesis string, pieces []struct{ file, after, before string }) (*verdict.Entry, time.Duration, string) {
		w := w.as(t)
		id := w.propose(hypothesis, pieces)
		start := time.Now()
		e := w.verdict(id)
		took := time.Since(start)
		t.Logf("verdict in %s\n%s", took.Round(time.Second), w.hone("verdict", "show", e.ID))
		if e.Bench == nil {
			t.Fatalf("%s (%s) with no bench: %s", e.Verdict, e.Reason, e.Detail)
		}
		if took > 5*time.Minute {
			t.Errorf("the verdict took %s", took.Round(time.Second))
		}
		return e, took, id
	}

	t.Run("Inlining", func(t *testing.T) {
		fast, took, id := judge(t, "Sum64String and WriteString inline", inlined)
		st := fast.Bench.Stat(fast.Bench.Metric)
		base, cand := w.as(t).buildSides(id)
		ind := independent(t, base, cand, fast.Bench)
		t.Logf("inlining: hone %.3fx [%.3f, %.3f] (geomean) in %s; independent go test -bench + benchmath %.3fx", st.Speedup, st.CILow, st.CIHigh, took.Round(time.Second), ind.geomean)
		switch {
		case fast.Verdict == ledger.VerdictAccepted:
		case fast.Verdict == ledger.VerdictNeedsHumanReview && (fast.Reason == verdict.ReasonUnseeded || fast.Reason == verdict.ReasonImproved && len(fast.RiskSignals) > 0):
		default:
			t.Errorf("inlining: %s (%s): %s; want faster", fast.Verdict, fast.Reason, fast.Detail)
		}
		// What decided faster must hold the independent figure: the
		// geometric mean when it decided, and each benchmark decided
		// faster alone.
		b := fast.Bench
		if b.Decisions[len(b.Decisions)-1] == "faster" && (ind.geomean < st.CILow || ind.geomean > st.CIHigh) {
			t.Errorf("inlining: hone's geometric mean interval [%.3f, %.3f] does not hold the independent %.3fx", st.CILow, st.CIHigh, ind.geomean)
		}
		for _, r := range b.Benchmarks {
			got := ind.ratio[r.Name]
			t.Logf("%s: hone %.3fx [%.3f, %.3f] %s %s; independent %.3fx", r.Name, r.CPUStats.Speedup, r.CPUStats.CILow, r.CPUStats.CIHigh, r.Decision, r.FamilyDecision, got)
			if r.FamilyDecision == "faster" && (got < r.CPUStats.CILow || got > r.CPUStats.CIHigh) {
				t.Errorf("%s: hone's interval [%.3f, %.3f] does not hold the independent %.3fx", r.Name, r.CPUStats.CILow, r.CPUStats.CIHigh, got)
			}
		}
	})
	t.Run("Slowdown", func(t *testing.T) {
		slow, took, id := judge(t, "Sum64String hashes twice", slowdown)
		base, cand := w.as(t).buildSides(id)
		ind := independent(t, base, cand, slow.Bench)
		st := slow.Bench.Stat(slow.Bench.Metric)
		t.Logf("slowdown: hone %.3fx [%.3f, %.3f] in %s; independent %.3fx", st.Speedup, st.CILow, st.CIHigh, took.Round(time.Second), ind.geomean)
		if slow.Verdict != ledger.VerdictRejectedBench || slow.Reason != verdict.ReasonRegressed {
			t.Errorf("slowdown: %s (%s): %s; want rejected-bench (regressed)", slow.Verdict, slow.Reason, slow.Detail)
		}
	})
}

// buildSides builds the benchmark binary of the pin and of a patch's
// commit outside hone, in worktrees of their own, as a user would with
// the environment this test has.
func (w *world) buildSides(id string) (base, cand string) {
	w.t.Helper()
	dir := w.t.TempDir()
	var bins [2]string
	for i, rev := range []string{"main", ledger.PatchRef(id)} {
		tree := filepath.Join(dir, strconv.Itoa(i))
		w.git("worktree", "add", "-q", "--detach", tree, rev)
		bins[i] = filepath.Join(dir, strconv.Itoa(i)+".test")
		cmd := exec.Command("go", "test", "-c", "-o", bins[i], ".")
		cmd.Dir = tree
		if out, err := cmd.CombinedOutput(); err != nil {
			w.t.Fatalf("go test -c at %s: %v\n%s", rev, err, out)
		}
	}
	return bins[0], bins[1]
}

// measured is an independent measurement: each benchmark's median sec/op
// of the baseline over the candidate's, and their geometric mean over the
// benchmarks that decided.
type measured struct {
	ratio   map[string]float64
	geomean float64
}

// independent measures the benchmarks that decided b with go test -bench,
// the two binaries alternating for independentRounds rounds, with
// benchmath's median of each side's sec/op, as benchstat reports it.
func independent(t *testing.T, base, cand string, b *verdict.Bench) measured {
	t.Helper()
	var names []string
	for _, r := range b.Benchmarks {
		if r.Decides {
			names = append(names, r.Name)
		}
	}
	samples := [2]map[string][]float64{{}, {}}
	for range independentRounds {
		for i, bin := range []string{base, cand} {
			out, err := exec.Command(bin, "-test.run=^$", "-test.bench=.", "-test.benchtime=0.2s").Output()
			if err != nil {
				t.Fatalf("%s: %v", bin, err)
			}
			rd := benchfmt.NewReader(bytes.NewReader(out), bin)
			for rd.Scan() {
				r, ok := rd.Result().(*benchfmt.Result)
				if !ok {
					continue
				}
				if v, ok := r.Value("sec/op"); ok {
					name := "Benchmark" + procsSuffix.ReplaceAllString(string(r.Name.Full()), "")
					samples[i][name] = append(samples[i][name], v)
				}
			}
		}
	}
	m := measured{ratio: map[string]float64{}}
	logSum := 0.0
	for _, name := range names {
		var med [2]float64
		for i := range samples {
			s := benchmath.NewSample(samples[i][name], &benchmath.DefaultThresholds)
			med[i] = benchmath.AssumeNothing.Summary(s, 0.95).Center
		}
		if !(med[0] > 0 && med[1] > 0) {
			t.Fatalf("benchmark %s was not measured outside hone: %v", name, samples)
		}
		t.Logf("independent %s: %.4g vs %.4g s/op, %.3fx", name, med[0], med[1], med[0]/med[1])
		m.ratio[name] = med[0] / med[1]
		logSum += math.Log(med[0] / med[1])
	}
	m.geomean = math.Exp(logSum / float64(len(names)))
	return m
}

// procsSuffix is the GOMAXPROCS suffix go test gives a benchmark's name.
var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// as is w reporting to t, for a subtest.
func (w *world) as(t *testing.T) *world {
	c := *w
	c.t = t
	return &c
}
