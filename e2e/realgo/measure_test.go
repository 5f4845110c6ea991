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
const independentRounds = 6

// The real module judged on the clock: the upstream inlining change is
// faster, its interval holding what go test -bench and benchstat's
// statistics measure of the same benchmarks outside hone, and a slowdown
// is rejected, each verdict in under five minutes.
func TestMeasureXXHashInliningIsFasterAndASlowdownRejected(t *testing.T) {
	tier.Measure(t, "the inlining change is judged on the geometric mean of the benchmarks that decide, "+
		"a decision whose false 'faster' and false 'slower' are each held at 2.5% one-sided by the sequential design, "+
		"so a real change of several percent reads as not-faster only through the design's type II error, which its "+
		"max_pairs of 30 keeps small for the 4-5% the independent measurement puts it at; the slowdown hashes every "+
		"string Sum64String is given twice, a regression of up to half on the deciding Sum64String benchmarks, many "+
		"times their intervals' widths; the independent figure is a median over six rounds per side, so its own "+
		"error is a fraction of hone's interval's half-width")
	for _, tool := range []string{"go", "bwrap", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed", tool)
		}
	}
	w := newWorld(t, nil)
	// Each subtest judges one patch; they share the repository and run
	// one after the other, each verdict alone on the machine.
	judge := func(t *testing.T, hypothesis string, pieces []struct{ file, after, before string }) (*verdict.Entry, time.Duration, string) {
		w := w.as(t)
		id := w.propose(hypothesis, pieces)
		start := time.Now()
		e := w.verdict(id)
		took := time.Since(start)
		if e.Verdict == ledger.VerdictError {
			// An error blames no patch and may be run again, as a user would.
			t.Logf("run again after %s: %s", took.Round(time.Second), e.Detail)
			start = time.Now()
			e = w.verdict(id)
			took = time.Since(start)
		}
		t.Logf("verdict in %s\n%s", took.Round(time.Second), w.hone("verdict", "show", e.ID))
		return e, took, id
	}

	t.Run("Inlining", func(t *testing.T) {
		fast, took, id := judge(t, "Sum64String and WriteString inline", inlined)
		if fast.Bench == nil {
			t.Fatalf("inlining: %s (%s) with no bench: %s", fast.Verdict, fast.Reason, fast.Detail)
		}
		st := fast.Bench.Stat(fast.Bench.Metric)
		base, cand := w.as(t).buildSides(id)
		ind := independent(t, base, cand, fast.Bench)
		t.Logf("inlining: hone %.3fx [%.3f, %.3f] in %s; independent go test -bench + benchmath %.3fx", st.Speedup, st.CILow, st.CIHigh, took.Round(time.Second), ind)
		switch {
		case fast.Verdict == ledger.VerdictAccepted:
		case fast.Verdict == ledger.VerdictNeedsHumanReview && (fast.Reason == verdict.ReasonUnseeded || fast.Reason == verdict.ReasonImproved && len(fast.RiskSignals) > 0):
		default:
			t.Errorf("inlining: %s (%s): %s; want faster", fast.Verdict, fast.Reason, fast.Detail)
		}
		if ind < st.CILow || ind > st.CIHigh {
			t.Errorf("inlining: hone's interval [%.3f, %.3f] does not hold the independent %.3fx", st.CILow, st.CIHigh, ind)
		}
		if took > 5*time.Minute {
			t.Errorf("inlining: the verdict took %s", took.Round(time.Second))
		}
	})
	t.Run("Slowdown", func(t *testing.T) {
		slow, took, id := judge(t, "Sum64String hashes twice", slowdown)
		if slow.Bench == nil {
			t.Fatalf("slowdown: %s (%s) with no bench: %s", slow.Verdict, slow.Reason, slow.Detail)
		}
		base, cand := w.as(t).buildSides(id)
		ind := independent(t, base, cand, slow.Bench)
		if st := slow.Bench.Stat(slow.Bench.Metric); st != nil {
			t.Logf("slowdown: hone %.3fx [%.3f, %.3f] in %s; independent %.3fx", st.Speedup, st.CILow, st.CIHigh, took.Round(time.Second), ind)
		}
		if slow.Verdict != ledger.VerdictRejectedBench || slow.Reason != verdict.ReasonRegressed {
			t.Errorf("slowdown: %s (%s): %s; want rejected-bench (regressed)", slow.Verdict, slow.Reason, slow.Detail)
		}
		if took > 5*time.Minute {
			t.Errorf("slowdown: the verdict took %s", took.Round(time.Second))
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

// independent measures the benchmarks that decided b with go test -bench,
// the two binaries alternating for independentRounds rounds, and returns
// the geometric mean over them of benchmath's median sec/op of the
// baseline over the candidate's, as benchstat reports it.
func independent(t *testing.T, base, cand string, b *verdict.Bench) float64 {
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
		logSum += math.Log(med[0] / med[1])
	}
	return math.Exp(logSum / float64(len(names)))
}

// procsSuffix is the GOMAXPROCS suffix go test gives a benchmark's name.
var procsSuffix = regexp.MustCompile(`-[0-9]+$`)
