package benchformat

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

const goAll = `"$BENCH" -test.run='^$' -test.bench=. -test.benchtime=100x -test.benchmem`

func TestParseGoReadsEveryBenchmarkOfARealRun(t *testing.T) {
	run := parse(t, Go, harnessOutput(t, goBench(t), goAll, "HONE_SEED=7"))
	want := []string{"BenchmarkAlloc", "BenchmarkHeavy", "BenchmarkLight", "BenchmarkMisbehave",
		"BenchmarkSizes/a[b](c)", "BenchmarkSizes/n=10", "BenchmarkSizes/utf-8"}
	if got := names(run); !slices.Equal(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	if !run.Passed || run.Format != Go {
		t.Errorf("run = %+v", run)
	}
	for _, b := range run.Benchmarks {
		if b.Iterations != 100 || b.Status != Pass || !(b.NsPerOp > 0) {
			t.Errorf("%s: %+v", b.Name, b)
		}
		if _, ok := b.Metrics["allocs/op"]; !ok {
			t.Errorf("%s: no allocs/op in %v", b.Name, b.Metrics)
		}
	}
	if m := run.Find("BenchmarkAlloc").Metrics; m["allocs/op"] != 1 || m["B/op"] < 64 {
		t.Errorf("BenchmarkAlloc metrics = %v", m)
	}
	if c := run.Find("BenchmarkLight").Metrics["checksum"]; c == 0 {
		t.Errorf("the custom metric is missing: %v", run.Find("BenchmarkLight").Metrics)
	}
}

// GOMAXPROCS only changes the suffix Go appends to result lines; the names
// Parse returns stay the same.
func TestParseGoNamesDoNotDependOnGOMAXPROCS(t *testing.T) {
	one := parse(t, Go, harnessOutput(t, goBench(t), `"$BENCH" -test.run='^$' -test.bench=Light -test.benchtime=10x`, "GOMAXPROCS=1"))
	two := parse(t, Go, harnessOutput(t, goBench(t), `"$BENCH" -test.run='^$' -test.bench=Light -test.benchtime=10x`, "GOMAXPROCS=2"))
	if !slices.Equal(names(one), names(two)) || names(one)[0] != "BenchmarkLight" {
		t.Errorf("GOMAXPROCS=1: %q, GOMAXPROCS=2: %q", names(one), names(two))
	}
}

func TestParseGoRefusesAFailedBenchmarkAndSaysWhy(t *testing.T) {
	out := harnessOutput(t, goBench(t), goAll, "BENCH_FAIL=1")
	run, err := Parse(Go, out)
	refusedAs(t, err, ErrFailed)
	if run == nil {
		t.Fatal("no Run with the failure")
	}
	b := run.Find("BenchmarkMisbehave")
	if b == nil || b.Status != Fail || !strings.HasSuffix(b.Message, "_test.go:51: boom: the answer is wrong") {
		t.Errorf("failed benchmark = %+v", b)
	}
	if run.Passed {
		t.Error("a failed run is marked passed")
	}
	if l := run.Find("BenchmarkLight"); l == nil || l.Status != Pass {
		t.Errorf("the others: %+v", l)
	}
}

func TestParseGoRecordsASkipWithVerbose(t *testing.T) {
	run := parse(t, Go, harnessOutput(t, goBench(t), `"$BENCH" -test.run='^$' -test.bench=Misbehave -test.benchtime=10x -test.v`, "BENCH_SKIP=1"))
	b := run.Find("BenchmarkMisbehave")
	if b == nil || b.Status != Skip || !strings.HasSuffix(b.Message, "_test.go:53: not on this machine") {
		t.Errorf("skipped benchmark = %+v", b)
	}
}

func TestParseGoRefusesBadRuns(t *testing.T) {
	bench := goBench(t)
	full := harnessOutput(t, bench, goAll)
	for _, c := range []struct {
		name string
		out  []byte
		kind error
	}{
		{"no benchmark matched", harnessOutput(t, bench, `"$BENCH" -test.run='^$' -test.bench=NoSuchThing -test.benchtime=10x`), ErrNoBenchmarks},
		// -test.cpu lists are refused by Check; their output repeats each
		// name with another GOMAXPROCS suffix.
		{"each benchmark twice", harnessOutput(t, bench, `"$BENCH" -test.run='^$' -test.bench=Light -test.benchtime=10x -test.cpu=1,2`), ErrDuplicate},
		{"crashed", harnessOutput(t, bench, goAll, "BENCH_PANIC=1"), ErrIncomplete},
		{"killed before the end", full[:bytes.LastIndex(full, []byte("PASS"))], ErrIncomplete},
		{"a benchmark printed to stdout", harnessOutput(t, bench, goAll, "BENCH_PRINT=1"), ErrMalformed},
		{"nothing at all", nil, ErrIncomplete},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := Parse(Go, c.out)
			refusedAs(t, err, c.kind)
			if run != nil {
				t.Errorf("a refused output still gave a Run: %+v", run)
			}
		})
	}
}

// Through go test, the package's "ok" line closes the run, and the module's
// name comes as a "pkg:" line.
func TestParseGoReadsGoTestOutput(t *testing.T) {
	goBench(t)
	out := harnessOutput(t, "", `cd testdata/gobench && go test -run='^$' -bench=Light -benchtime=20x`)
	run := parse(t, Go, out)
	if got := names(run); !slices.Equal(got, []string{"BenchmarkLight"}) || run.Benchmarks[0].Iterations != 20 {
		t.Errorf("run = %+v", run)
	}
}
