package benchformat

import (
	"maps"
	"slices"
	"testing"
	"time"
)

var outputs = []string{"checksum"}

func TestSameCodeSameSeedSameFingerprint(t *testing.T) {
	bench := goBench(t)
	a := parse(t, Go, harnessOutput(t, bench, goAll, "HONE_SEED=7"))
	b := parse(t, Go, harnessOutput(t, bench, goAll, "HONE_SEED=7", "GOGC=1"))
	if Fingerprint(a, outputs) != Fingerprint(b, outputs) {
		t.Errorf("two runs of the same code on the same input differ:\n%+v\n%+v", a, b)
	}
	g := newGoogleHarness(t, 20)
	command := `"$BENCH" --benchmark_format=json --benchmark_min_time=20x`
	ga := parse(t, GoogleBenchmark, g.run(t, command, "HONE_SEED=7"))
	gb := parse(t, GoogleBenchmark, g.run(t, command, "HONE_SEED=7"))
	if Fingerprint(ga, outputs) != Fingerprint(gb, outputs) {
		t.Errorf("two Google Benchmark runs of the same code differ:\n%+v\n%+v", ga, gb)
	}
}

// Whatever the timings say, and whatever the candidate does to the
// allocation figures (an optimisation may well remove allocations), the
// fingerprint stays.
func TestTimingsNeverMoveTheFingerprint(t *testing.T) {
	run := parse(t, Go, harnessOutput(t, goBench(t), goAll, "HONE_SEED=7"))
	want := Fingerprint(run, outputs)
	noisy := *run
	noisy.Benchmarks = slices.Clone(run.Benchmarks)
	for i := range noisy.Benchmarks {
		b := &noisy.Benchmarks[i]
		b.NsPerOp *= 3.7
		b.Metrics = maps.Clone(b.Metrics)
		b.Metrics["B/op"] = 0
		b.Metrics["allocs/op"] = 0
	}
	if got := Fingerprint(&noisy, outputs); got != want {
		t.Error("timings or allocations changed the fingerprint")
	}
	if Fingerprint(run, []string{"checksum", "checksum"}) != want {
		t.Error("naming an output twice changed the fingerprint")
	}
}

// A candidate that answers without doing the work runs every benchmark,
// with the same counts, and passes: only a metric computed from the
// answers, marked as an output, tells it from the real thing.
func TestCandidateThatSkipsTheWorkIsCaughtByItsOutputMetric(t *testing.T) {
	bench := goBench(t)
	honest := parse(t, Go, harnessOutput(t, bench, goAll, "HONE_SEED=7"))
	cheat := parse(t, Go, harnessOutput(t, bench, goAll, "HONE_SEED=7", "CHEAT=1"))
	if Fingerprint(honest, outputs) == Fingerprint(cheat, outputs) {
		t.Error("a candidate that skips the work has the baseline's fingerprint")
	}
	if Fingerprint(honest, nil) != Fingerprint(cheat, nil) {
		t.Error("without an output metric the runs should look alike: names, counts and status match")
	}
}

func TestFingerprintSeesWhatTheRunDid(t *testing.T) {
	bench := goBench(t)
	base := parse(t, Go, harnessOutput(t, bench, goAll, "HONE_SEED=7"))
	want := Fingerprint(base, outputs)
	for name, out := range map[string][]byte{
		"another seed":            harnessOutput(t, bench, goAll, "HONE_SEED=8"),
		"another iteration count": harnessOutput(t, bench, `"$BENCH" -test.run='^$' -test.bench=. -test.benchtime=99x`, "HONE_SEED=7"),
		"a benchmark missing":     harnessOutput(t, bench, `"$BENCH" -test.run='^$' -test.bench='Light|Heavy|Sizes|Alloc' -test.benchtime=100x`, "HONE_SEED=7"),
		"a benchmark skipped":     harnessOutput(t, bench, goAll+" -test.v", "HONE_SEED=7", "BENCH_SKIP=1"),
	} {
		if got := Fingerprint(parse(t, Go, out), outputs); got == want {
			t.Errorf("%s: same fingerprint as the baseline", name)
		}
	}
}

func TestCPUPerOpTakesTheOneBenchmarkOfTheRun(t *testing.T) {
	bench := goBench(t)
	command := `"$BENCH" -test.bench=. -test.benchtime=100x`
	one, err := CommandFor(Go, command, "BenchmarkLight")
	if err != nil {
		t.Fatal(err)
	}
	run := parse(t, Go, harnessOutput(t, bench, one))
	perOp, err := CPUPerOp(run, "BenchmarkLight", 3*time.Millisecond)
	if err != nil || perOp != 30000 {
		t.Errorf("CPUPerOp = %v, %v; want 3ms/100 = 30000 ns", perOp, err)
	}
	full := parse(t, Go, harnessOutput(t, bench, command))
	_, err = CPUPerOp(full, "BenchmarkLight", time.Millisecond)
	refusedAs(t, err, ErrNotAlone)
	_, err = CPUPerOp(run, "BenchmarkHeavy", time.Millisecond)
	refusedAs(t, err, ErrNotAlone)
}
