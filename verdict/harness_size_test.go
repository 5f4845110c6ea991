package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
)

// The count grows until the loop is most of a run and long enough to
// measure; a run at N that a busy machine made cost twice its fixed cost
// does not stop it.
func TestNextCountGrowsUntilTheLoopDominatesAndCanBeMeasured(t *testing.T) {
	for _, c := range []struct {
		name       string
		n          int
		fixed, atN float64
		lo, hi     int
	}{
		{"the loop dominates", 1000, 0.01, 0.2, 1000, 1000},
		{"start-up dominates, at most sixteenfold a round", 1000, 0.09, 0.1, 16_000, 16_000},
		{"no measurable loop", 1000, 0.01, 0.009, 16_000, 16_000},
		{"noise that doubles a tiny run", 200, 0.003, 0.006, 3200, 3200},
		{"a short loop that dominates", 1000, 0.001, 0.011, 5000, 6000},
	} {
		got := nextCount(c.n, c.fixed, c.atN)
		if got < c.lo || got > c.hi {
			t.Errorf("%s: nextCount(%d, %v, %v) = %d, want %d to %d", c.name, c.n, c.fixed, c.atN, got, c.lo, c.hi)
		}
	}
}

// On a machine whose core speed moves each run's CPU time by a quarter, a
// loop that is already 98% of a run at the command's count keeps that
// count. Fitted from runs at N and 2N, that noise read as tens of
// milliseconds of start-up, and N grew to what max_loop allowed: every
// run several times longer for an interval no narrower.
func TestNoiseOnABusyMachineDoesNotInflateTheCount(t *testing.T) {
	grown := 0
	for seed := range uint64(8) {
		m := &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": 1}), speed: busyCores(seed)}
		hr := harnessOf(m)
		// 100,000 iterations of 1 µs: a loop of 100 ms beside 2 ms of start-up.
		for _, spec := range []*jail.Spec{&hr.baseline, &hr.candidate} {
			spec.Command = strings.Replace(spec.Command, "=100x", "=100000x", 1)
		}
		e := judged(t, hr)
		if n := e.Bench.Benchmarks[0].Counts[0]; n != 100000 {
			grown++
			t.Logf("seed %d: sized to %d", seed, n)
		}
	}
	if grown > 0 {
		t.Errorf("%d of 8 verdicts grew a count whose loop already dominates", grown)
	}
}

// [bench] max_loop bounds the loop a count is sized for: a benchmark of
// 1 µs per iteration is sized past 50 ms of loop by default (the least
// loop hone measures, and a tenth more against noise), and within 50 ms
// when max_loop says so; the entry records the bound and show prints it.
func TestMaxLoopBoundsTheSizedLoop(t *testing.T) {
	loopAt := func(maxLoop time.Duration) (float64, *Entry) {
		m := &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": 0.5})}
		hr := harnessOf(m)
		if maxLoop > 0 {
			hr.protocol.MaxLoop.Duration = maxLoop
		}
		e := judged(t, hr)
		return float64(e.Bench.Benchmarks[0].Counts[0]) * 1e-6, e
	}
	if loop, e := loopAt(0); loop <= 0.05 || e.Bench.MaxLoopSeconds != 0.5 {
		t.Errorf("by default the loop at N is %.3fs (max_loop %gs recorded), want more than 50ms", loop, e.Bench.MaxLoopSeconds)
	}
	loop, e := loopAt(50 * time.Millisecond)
	if loop > 0.05 || e.Bench.MaxLoopSeconds != 0.05 {
		t.Errorf("with max_loop 50ms the loop at N is %.3fs (max_loop %gs recorded)", loop, e.Bench.MaxLoopSeconds)
	}
	var text strings.Builder
	if err := WriteText(&text, e); err != nil || !strings.Contains(text.String(), "counts sized for runs of at most 50ms at the smaller") {
		t.Errorf("%v\n%s", err, text.String())
	}
}

// A candidate's harness can tell its sizing runs by their count (two
// iterations, startupCount) and burn CPU time there, to look like a run
// that is mostly start-up and ask for a larger count. It gets no count
// past the baseline's max_loop bound, and no verdict it did not earn:
// sizing chooses N, never a sample, and every pair still measures the
// marginal cost of N more iterations.
func TestHarnessBurningCPUWhileSizedBuysNothing(t *testing.T) {
	burn := func(cand bool, count int) float64 {
		if cand && count == startupCount {
			return 0.3
		}
		return 0
	}
	for _, c := range []struct {
		name   string
		ratio  float64
		accept bool
	}{{"no faster", 1, false}, {"honestly twice as fast", 0.5, true}} {
		m := &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": c.ratio}), burn: burn}
		hr := harnessOf(m)
		e := judged(t, hr)
		r := e.Bench.Benchmarks[0]
		// costs: the baseline's iterations cost 1 µs to 1.02 µs.
		if loop := float64(r.Counts[0]) * 1.02e-6; loop > hr.protocol.MaxLoop.Seconds()*1.05 {
			t.Errorf("%s: N = %d, a baseline loop of %.3fs past max_loop %v", c.name, r.Counts[0], loop, hr.protocol.MaxLoop.Duration)
		}
		if accepted := e.Verdict == ledger.VerdictAccepted; accepted != c.accept {
			t.Errorf("%s: %s (%s) at %.3fx, want accepted %v", c.name, e.Verdict, e.Reason, e.Speedup, c.accept)
		}
	}
}

// xxhash's 4-byte benchmarks: iterations of a few nanoseconds beside tens
// of milliseconds of set-up. At the count the sixteenfold rounds reach
// (409,600) the loop is a millisecond or two, which the noise of the
// start-up runs can bury whole: here the runs that measure the fixed cost
// happened to cost 2 ms more than the rest, so the loop measured as less
// than nothing. Sizing must grow on until the loop outweighs the set-up,
// not take a buried loop for one that costs nothing.
func TestALoopBuriedInStartUpNoiseIsGrownPast(t *testing.T) {
	const setUp = 0.02 // seconds, beside harnessStartup's 2 ms
	burn := func(cand bool, count int) float64 {
		if count == startupCount {
			return setUp + 0.002
		}
		return setUp
	}
	// 3 ns per iteration on both sides.
	tiny := func(cand bool, name string, n int) harnessAnswer { return harnessAnswer{nsPerOp: 3, checksum: 7} }
	m := &harnessMeter{names: []string{"BenchmarkTiny"}, answer: tiny, burn: burn}
	e := judged(t, harnessOf(m))
	r := e.Bench.Benchmarks[0]
	loop := float64(r.Counts[0]) * 3e-9
	if loop < setUp {
		t.Errorf("sized to %d iterations, a loop of %.1f ms beside %.0f ms of set-up; sizing runs: %+v", r.Counts[0], loop*1e3, setUp*1e3, r.Sizing)
	}
	if r.Excluded != "" || r.BaselineScaling < 1.7 {
		t.Errorf("excluded %q, baseline scaling %.2f: a loop that outweighs its set-up scales", r.Excluded, r.BaselineScaling)
	}
}
