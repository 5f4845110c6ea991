package benchformat

import (
	"errors"
	"os"
	"slices"
	"testing"
)

func fuzzParse(f *testing.F, format string, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		run, err := Parse(format, out)
		switch {
		case err == nil:
			if !run.Passed || len(run.Benchmarks) == 0 {
				t.Fatalf("accepted a run that did not pass: %+v", run)
			}
			if !slices.IsSortedFunc(run.Benchmarks, func(a, b Benchmark) int { return compareStrings(a.Name, b.Name) }) {
				t.Fatalf("benchmarks not sorted: %q", names(run))
			}
			if len(slices.Compact(names(run))) != len(run.Benchmarks) {
				t.Fatalf("duplicate names: %q", names(run))
			}
			Fingerprint(run, []string{"checksum"})
		case errors.Is(err, ErrFailed):
			if run == nil {
				t.Fatal("a failed run came without its Run")
			}
		case run != nil:
			t.Fatalf("%v came with a Run", err)
		}
	})
}

func FuzzParseGo(f *testing.F) {
	fuzzParse(f, Go,
		[]byte("goos: linux\nBenchmarkA-2   \t100\t  12.5 ns/op\t 3 checksum\nBenchmarkA/b=1-2 10 1 ns/op 8 B/op\nPASS\n"),
		[]byte("--- FAIL: BenchmarkX\n    x_test.go:1: boom\nFAIL\n"),
		[]byte("BenchmarkX\n    x_test.go:3: skipped\n--- SKIP: BenchmarkX\nBenchmarkY 1 1 ns/op\nok  \tpkg\t0.1s\n"))
}

func FuzzParseGoogle(f *testing.F) {
	pass, err := os.ReadFile("testdata/googlebench/pass-1.7.1.json")
	if err != nil {
		f.Fatal(err)
	}
	fail, err := os.ReadFile("testdata/googlebench/fail-1.7.1.json")
	if err != nil {
		f.Fatal(err)
	}
	fuzzParse(f, GoogleBenchmark, pass, fail)
}

// A command CommandFor accepts comes back as a command Check accepts, for
// the one benchmark asked for.
func FuzzCommandFor(f *testing.F) {
	f.Add(Go, `x.test -test.bench=. -test.benchtime=10x -test.run=X`, "BenchmarkA/b")
	f.Add(Go, `cd a && go test -bench . -benchtime 10x ./p -args -test.v`, "BenchmarkA")
	f.Add(GoogleBenchmark, `b --benchmark_format=json --benchmark_min_time=5x --benchmark_filter=x`, "BM_A/8")
	f.Fuzz(func(t *testing.T, format, command, benchmark string) {
		got, err := CommandFor(format, command, benchmark)
		if err != nil {
			return
		}
		if err := Check(format, got); err != nil {
			t.Fatalf("CommandFor(%q) = %q, which Check refuses: %v", command, got, err)
		}
	})
}
