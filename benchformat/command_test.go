package benchformat

import (
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

func TestCheckAcceptsFixedIterationCounts(t *testing.T) {
	for _, c := range []struct{ format, command string }{
		{Process, "$HONE_OUT/wordfreq --seed {seed} words.txt"},
		{Go, `$HONE_OUT/json.test -test.run='^$' -test.bench=. -test.benchtime=1000x`},
		{Go, `$HONE_OUT/json.test -test.bench . -test.benchtime 1000x -test.benchmem`},
		{Go, `$HONE_OUT/json.test --test.bench=. --test.benchtime=1000x -test.count=1 -test.cpu=2`},
		{Go, `cd sub && GOGC=off go test -run='^$' -bench=. -benchtime=500x ./parser`},
		{Go, `go test -bench=. ./parser -args -test.benchtime=500x`},
		{Go, `go test -bench=. -benchtime=2s -benchtime=100x .`},
		{Go, `"$HONE_OUT/p.test" -test.bench=. -test.benchtime="100x" | tee /tmp/out`},
		{GoogleBenchmark, `$HONE_OUT/bench --benchmark_format=json --benchmark_min_time=1000x`},
		{GoogleBenchmark, `$HONE_OUT/bench --benchmark_min_time=0.5s --benchmark_min_time=20x --benchmark_format=json --benchmark_repetitions=1`},
	} {
		if err := Check(c.format, c.command); err != nil {
			t.Errorf("%s %q: %v", c.format, c.command, err)
		}
	}
}

func TestCheckRefusesWhatMakesRunsIncomparable(t *testing.T) {
	for _, c := range []struct{ name, format, command, says string }{
		{"unknown format", "criterion", "cargo bench", `is not one of process, go, google-benchmark`},
		{"empty", Process, "  ", "empty"},
		{"adaptive go", Go, `x.test -test.bench=.`, "add -test.benchtime=Nx"},
		{"adaptive go test", Go, `go test -bench=. ./...`, "add -test.benchtime=Nx"},
		{"time-based benchtime", Go, `x.test -test.bench=. -test.benchtime=2s`, "-benchtime=2s adapts"},
		{"last benchtime wins", Go, `x.test -test.bench=. -test.benchtime=100x -test.benchtime=1s`, "-benchtime=1s adapts"},
		{"zero count", Go, `x.test -test.bench=. -test.benchtime=0x`, "adapts"},
		{"expanded benchtime", Go, `x.test -test.bench=. -test.benchtime=$N`, "without expansions"},
		{"unprefixed flag to a binary", Go, `x.test -bench=. -benchtime=100x`, "add -test.benchtime=Nx"},
		{"after --", Go, `x.test -test.bench=. -- -test.benchtime=100x`, "add -test.benchtime=Nx"},
		{"unprefixed after -args", Go, `go test -bench=. . -args -benchtime=100x`, "add -test.benchtime=Nx"},
		{"no benchmarks", Go, `x.test -test.benchtime=100x`, "add -test.bench=."},
		{"count", Go, `x.test -test.bench=. -test.benchtime=100x -test.count=5`, "remove -count=5"},
		{"cpu list", Go, `x.test -test.bench=. -test.benchtime=100x -test.cpu=1,2,4`, "-cpu=1,2,4 runs each benchmark more than once"},
		{"json", Go, `go test -json -bench=. -benchtime=100x`, "remove -json"},
		{"test2json", Go, `x.test -test.v=test2json -test.bench=. -test.benchtime=100x`, "remove -json"},
		{"two harnesses", Go, `a.test -test.bench=. -test.benchtime=10x && b.test -test.bench=. -test.benchtime=10x`, "runs 2 harnesses"},
		{"not shell", Go, `x.test -test.bench=. -test.benchtime=10x 'unterminated`, "not valid shell"},
		{"adaptive google", GoogleBenchmark, `bench --benchmark_format=json`, "add --benchmark_min_time=Nx"},
		{"seconds", GoogleBenchmark, `bench --benchmark_format=json --benchmark_min_time=0.5`, "--benchmark_min_time=0.5 adapts"},
		{"single dash", GoogleBenchmark, `bench --benchmark_format=json -benchmark_min_time=100x`, "add --benchmark_min_time=Nx"},
		{"console output", GoogleBenchmark, `bench --benchmark_min_time=100x`, "add --benchmark_format=json"},
		{"csv output", GoogleBenchmark, `bench --benchmark_min_time=100x --benchmark_format=csv`, "add --benchmark_format=json"},
		{"repetitions", GoogleBenchmark, `bench --benchmark_format=json --benchmark_min_time=100x --benchmark_repetitions=10`, "remove --benchmark_repetitions=10"},
		{"warm-up", GoogleBenchmark, `bench --benchmark_format=json --benchmark_min_time=100x --benchmark_min_warmup_time=0.5`, "remove --benchmark_min_warmup_time=0.5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.format, c.command)
			if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v, want an invalid-input error saying %q", err, c.says)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("the error is not one line: %q", err)
			}
		})
	}
}

func TestWarningsNameAGoTestThatBuildsInEveryRun(t *testing.T) {
	if w := Warnings(Go, `cd sub && go test -run='^$' -bench=. -benchtime=500x ./parser`); len(w) != 1 || !strings.Contains(w[0], "go test -c") {
		t.Errorf("go test: %q", w)
	}
	for _, c := range []struct{ format, command string }{
		{Go, `$HONE_OUT/p.test -test.bench=. -test.benchtime=500x`},
		{Go, `go test -bench=. ./...`},
		{GoogleBenchmark, `bench --benchmark_format=json --benchmark_min_time=10x`},
		{Process, "go test ./..."},
	} {
		if w := Warnings(c.format, c.command); len(w) != 0 {
			t.Errorf("%s %q: %q", c.format, c.command, w)
		}
	}
}

func TestCommandForSelectsOneBenchmarkAndLeavesTheRestAsWritten(t *testing.T) {
	for _, c := range []struct{ format, command, benchmark, want string }{
		{Go, `$HONE_OUT/p.test -test.run='^$' -test.bench=. -test.benchtime=100x -test.benchmem`, "BenchmarkParse",
			`$HONE_OUT/p.test -test.benchtime=100x -test.bench='^BenchmarkParse(-[0-9]+)?$' -test.run='^$' -test.benchmem`},
		{Go, `cd sub && go test -bench . -benchtime 100x ./parser | tee log`, "BenchmarkDecode/size=1k",
			`cd sub && go test -benchtime 100x -bench='^BenchmarkDecode$/^size=1k(-[0-9]+)?$' -run='^$' ./parser | tee log`},
		{Go, `go test -bench=. ./p -args -test.benchtime=10x -v`, "BenchmarkX/a[b](c)",
			`go test ./p -args -test.benchtime=10x -test.bench='^BenchmarkX$/^a\[b\]\(c\)(-[0-9]+)?$' -test.run='^$' -v`},
		{GoogleBenchmark, `$HONE_OUT/bench --benchmark_filter=BM_ --benchmark_min_time=100x --benchmark_format=json`, "BM_Parse/1024/threads:2",
			`$HONE_OUT/bench --benchmark_min_time=100x --benchmark_filter='^BM_Parse/1024/threads:2$' --benchmark_format=json`},
		{GoogleBenchmark, `bench --benchmark_format=json --benchmark_min_time=1x`, "BM_T<int>/8",
			`bench --benchmark_format=json --benchmark_min_time=1x --benchmark_filter='^BM_T<int>/8$'`},
	} {
		got, err := CommandFor(c.format, c.command, c.benchmark)
		if err != nil {
			t.Errorf("%q: %v", c.command, err)
			continue
		}
		if got != c.want {
			t.Errorf("CommandFor(%q, %q)\n got %s\nwant %s", c.command, c.benchmark, got, c.want)
		}
		if err := Check(c.format, got); err != nil {
			t.Errorf("the rewritten command fails Check: %v", err)
		}
	}
}

func TestCommandAtRunsOneBenchmarkAtHonesOwnCount(t *testing.T) {
	for _, c := range []struct {
		format, command, benchmark string
		fixed                      int
		want                       string
	}{
		{Go, `$HONE_OUT/p.test -test.bench=. -test.benchtime=100x -test.benchmem`, "BenchmarkParse", 100,
			`$HONE_OUT/p.test -test.benchtime=4000x -test.bench='^BenchmarkParse(-[0-9]+)?$' -test.run='^$' -test.benchmem`},
		{Go, `go test -bench . --benchtime "100x" ./parser`, "BenchmarkDecode", 100,
			`go test --benchtime 4000x -bench='^BenchmarkDecode(-[0-9]+)?$' -run='^$' ./parser`},
		{Go, `go test -bench=. -benchtime 7x ./p`, "BenchmarkX", 7,
			`go test -benchtime 4000x -bench='^BenchmarkX(-[0-9]+)?$' -run='^$' ./p`},
		{GoogleBenchmark, `bench --benchmark_min_time=10x --benchmark_format=json`, "BM_A", 10,
			`bench --benchmark_min_time=4000x --benchmark_filter='^BM_A$' --benchmark_format=json`},
	} {
		if n, err := Iterations(c.format, c.command); err != nil || n != c.fixed {
			t.Errorf("Iterations(%q) = %d, %v; want %d", c.command, n, err, c.fixed)
		}
		got, err := CommandAt(c.format, c.command, c.benchmark, 4000)
		if err != nil || got != c.want {
			t.Errorf("CommandAt(%q)\n got %s (%v)\nwant %s", c.command, got, err, c.want)
			continue
		}
		if n, err := Iterations(c.format, got); err != nil || n != 4000 {
			t.Errorf("the rewritten command fixes %d iterations (%v), want 4000", n, err)
		}
	}
	if _, err := CommandAt(Go, "x.test -test.bench=. -test.benchtime=10x", "BenchmarkX", 0); !errs.Is(err, errs.Invalid) {
		t.Errorf("a count of 0: %v", err)
	}
}

func TestCommandForRefusesWhatItCannotRun(t *testing.T) {
	for _, c := range []struct{ format, command, benchmark string }{
		{Process, "wordfreq words.txt", "x"},
		{Go, "x.test -test.bench=.", "BenchmarkX"},
		{Go, "x.test -test.bench=. -test.benchtime=10x", ""},
	} {
		if _, err := CommandFor(c.format, c.command, c.benchmark); !errs.Is(err, errs.Invalid) {
			t.Errorf("CommandFor(%s, %q, %q) = %v, want an invalid-input error", c.format, c.command, c.benchmark, err)
		}
	}
}

// Every benchmark of a real run, selected with CommandFor and run again,
// comes back alone and under the same name, whatever GOMAXPROCS is: the
// sub-benchmark "utf-8" ends in what looks like a GOMAXPROCS suffix.
func TestCommandForRunsEachRealGoBenchmarkAlone(t *testing.T) {
	bench := goBench(t)
	command := `"$BENCH" -test.run='^$' -test.bench=. -test.benchtime=10x`
	for _, procs := range []string{"GOMAXPROCS=1", "GOMAXPROCS=2"} {
		full := parse(t, Go, harnessOutput(t, bench, command, procs))
		for _, name := range names(full) {
			one, err := CommandFor(Go, command, name)
			if err != nil {
				t.Fatal(err)
			}
			run := parse(t, Go, harnessOutput(t, bench, one, procs))
			if got := names(run); !slices.Equal(got, []string{name}) {
				t.Errorf("%s: %s ran %q, want %q alone", procs, one, got, name)
			}
		}
	}
}

func TestCommandForRunsEachRealGoogleBenchmarkAlone(t *testing.T) {
	g := newGoogleHarness(t, 10)
	command := `"$BENCH" --benchmark_format=json --benchmark_min_time=10x`
	full := parse(t, GoogleBenchmark, g.run(t, command))
	if len(full.Benchmarks) != 3 {
		t.Fatalf("full run: %q", names(full))
	}
	for _, name := range names(full) {
		one, err := CommandFor(GoogleBenchmark, command, name)
		if err != nil {
			t.Fatal(err)
		}
		run := parse(t, GoogleBenchmark, g.run(t, one))
		if got := names(run); !slices.Equal(got, []string{name}) {
			t.Errorf("%s ran %q, want %q alone", one, got, name)
		}
	}
}
