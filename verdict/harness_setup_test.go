package verdict

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// A benchmark the user does not own can spend tens of milliseconds on
// set-up in every run (cespare/xxhash's BenchmarkDigestBytes/100B: 21-28
// ms) beside an iteration of twenty nanoseconds. Sizing grows the count,
// whatever the command starts from, until the loop outweighs that set-up,
// so the benchmark scales and is judged: three rounds of sixteenfold
// growth from 100 iterations stopped at 409,600, a loop of 8 ms beside 25
// ms of set-up, and the untouched baseline failed the linearity proof.
func TestSizingGrowsTheCountPastAHeavySetUp(t *testing.T) {
	const setUp = 0.025
	m := &harnessMeter{names: []string{"BenchmarkA"}, answer: func(cand bool, name string, n int) harnessAnswer {
		v := 20 * (1 + 0.01*float64(n%3))
		if cand {
			v *= 0.5
		}
		return harnessAnswer{nsPerOp: v, checksum: 7}
	}, burn: func(bool, int) float64 { return setUp }}
	e := judged(t, harnessOf(m))
	r := e.Bench.Benchmarks[0]
	if loop := float64(r.Counts[0]) * 20e-9; loop < 4*setUp {
		t.Errorf("sized to N = %d, a loop of %.1f ms beside %.0f ms of set-up; want the loop to outweigh it", r.Counts[0], loop*1e3, setUp*1e3)
	}
	if e.Verdict != ledger.VerdictAccepted {
		t.Errorf("a twofold gain behind a heavy set-up: %s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
}

// A benchmark whose baseline cannot scale at any count hone may run (its
// set-up outweighs its loop within max_loop) is left out of the decision
// and named; the others decide. Only when none is left is the verdict an
// error, as before. It recomputes to itself.
func TestABaselineBenchmarkThatCannotScaleIsLeftOutNamed(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: func(cand bool, name string, n int) harnessAnswer {
		v := 1000 * (1 + 0.01*float64(n%3))
		if cand {
			v *= 0.5
		}
		a := harnessAnswer{nsPerOp: v, checksum: 7}
		// B's loop does not repeat its work: its cost is flat in N.
		a.flat = name == "BenchmarkB"
		return a
	}}
	e := judged(t, harnessOf(m))
	var b *BenchmarkResult
	for i := range e.Bench.Benchmarks {
		if e.Bench.Benchmarks[i].Name == "BenchmarkB" {
			b = &e.Bench.Benchmarks[i]
		}
	}
	if e.Verdict != ledger.VerdictAccepted || b == nil || b.Decides || !strings.Contains(b.Excluded, "the baseline's benchmark \"BenchmarkB\"") ||
		!strings.Contains(e.Summary, "left out: BenchmarkB") {
		t.Fatalf("%s (%s): %s\nB %+v", e.Verdict, e.Reason, e.Summary, b)
	}
	if re := recompute(e); !sameVerdict(e, re) || re.Summary != e.Summary {
		t.Errorf("recomputed %s (%s) %q; stored %s (%s) %q", re.Verdict, re.Reason, re.Summary, e.Verdict, e.Reason, e.Summary)
	}
}

// Past its first rounds, sizing grows on until it measures a loop as large
// as the set-up, never on a prediction from a loop that noise inflated: a
// run at a small count that costs a millisecond more than its loop (a busy
// core) once predicted that sixteen times the count would outweigh the
// set-up, and sizing stopped there with the loop a sixth of each run; the
// untouched baseline then failed the linearity proof.
func TestSizingDoesNotStopOnALoopThatNoiseInflated(t *testing.T) {
	const setUp = 0.010
	m := &harnessMeter{names: []string{"BenchmarkA"}, answer: func(cand bool, name string, n int) harnessAnswer {
		v := 5 * (1 + 0.01*float64(n%3))
		if cand {
			v *= 0.5
		}
		return harnessAnswer{nsPerOp: v, checksum: 7}
	}, burn: func(_ bool, count int) float64 {
		if count == 25600 {
			return setUp + 0.001
		}
		return setUp
	}}
	e := judged(t, harnessOf(m))
	r := e.Bench.Benchmarks[0]
	if loop := float64(r.Counts[0]) * 5e-9; loop < setUp+harnessStartup/1e9 || r.Excluded != "" {
		t.Errorf("sized to N = %d, a loop of %.1f ms beside %.0f ms of set-up (left out: %q); want it to outweigh the set-up", r.Counts[0], loop*1e3, setUp*1e3, r.Excluded)
	}
	if e.Verdict != ledger.VerdictAccepted {
		t.Errorf("a twofold gain: %s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
}
