package benchformat

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// googleHarness runs the Google benchmarks of testdata/googlebench with a
// fixed iteration count. Google Benchmark takes --benchmark_min_time=Nx
// from version 1.8; with an older library (Debian 12 has 1.7.1) the count
// is fixed in the code instead, and the flag, which that library would
// refuse, is taken out of the command before it runs.
type googleHarness struct {
	binary string
	env    []string
	strip  bool
}

func newGoogleHarness(t testing.TB, iterations int) *googleHarness {
	t.Helper()
	g := &googleHarness{binary: googleBench(t)}
	if exec.Command(g.binary, "--benchmark_min_time=1x", "--benchmark_list_tests=true").Run() != nil {
		t.Log("this Google Benchmark is older than 1.8: the iteration count is fixed in the code")
		g.env, g.strip = []string{"ITERATIONS=" + strconv.Itoa(iterations)}, true
	}
	return g
}

func (g *googleHarness) run(t testing.TB, command string, env ...string) []byte {
	t.Helper()
	if g.strip {
		var kept []string
		for _, f := range strings.Fields(command) {
			if !strings.HasPrefix(f, "--benchmark_min_time=") {
				kept = append(kept, f)
			}
		}
		command = strings.Join(kept, " ")
	}
	return harnessOutput(t, g.binary, command, append(slices.Clone(g.env), env...)...)
}

func TestParseGoogleReadsARealRun(t *testing.T) {
	g := newGoogleHarness(t, 50)
	run := parse(t, GoogleBenchmark, g.run(t, `"$BENCH" --benchmark_format=json --benchmark_min_time=50x`, "HONE_SEED=7"))
	if len(run.Benchmarks) != 3 || !run.Passed {
		t.Fatalf("run = %+v", run)
	}
	for _, b := range run.Benchmarks {
		if b.Iterations != 50 || b.Status != Pass || !(b.NsPerOp > 0) || !(b.Metrics["cpu-ns/op"] > 0) {
			t.Errorf("%s: %+v", b.Name, b)
		}
	}
	work := run.Benchmarks[slices.IndexFunc(run.Benchmarks, func(b Benchmark) bool { return strings.HasPrefix(b.Name, "BM_Work/1000") })]
	if work.Metrics["checksum"] == 0 || work.Metrics["items_per_second"] == 0 {
		t.Errorf("counters missing: %v", work.Metrics)
	}
}

func TestParseGoogleRefusesAFailedBenchmarkAndSaysWhy(t *testing.T) {
	g := newGoogleHarness(t, 10)
	run, err := Parse(GoogleBenchmark, g.run(t, `"$BENCH" --benchmark_format=json --benchmark_min_time=10x`, "BENCH_FAIL=1"))
	refusedAs(t, err, ErrFailed)
	if run == nil || run.Passed {
		t.Fatalf("run = %+v", run)
	}
	i := slices.IndexFunc(run.Benchmarks, func(b Benchmark) bool { return b.Status == Fail })
	if i < 0 || !strings.HasPrefix(run.Benchmarks[i].Name, "BM_Misbehave") || run.Benchmarks[i].Message != "boom: the answer is wrong" {
		t.Errorf("benchmarks = %+v", run.Benchmarks)
	}
	if !strings.Contains(err.Error(), "boom: the answer is wrong") {
		t.Errorf("the error does not say why: %v", err)
	}
}

// Reports captured from real runs of testdata/googlebench with Google
// Benchmark 1.7.1 (Debian 12's libbenchmark-dev), the iteration count
// fixed in the code: these tests need no library.
func TestParseGoogleCapturedReports(t *testing.T) {
	pass, err := os.ReadFile("testdata/googlebench/pass-1.7.1.json")
	if err != nil {
		t.Fatal(err)
	}
	run := parse(t, GoogleBenchmark, pass)
	want := []string{"BM_Misbehave/iterations:100", "BM_Work/1000/iterations:100", "BM_Work/4000/iterations:100"}
	if !slices.Equal(names(run), want) {
		t.Errorf("names = %q, want %q", names(run), want)
	}
	if c := run.Find("BM_Work/1000/iterations:100").Metrics["checksum"]; c != 630772939 {
		t.Errorf("checksum = %v", c)
	}
	fail, err := os.ReadFile("testdata/googlebench/fail-1.7.1.json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(GoogleBenchmark, fail)
	refusedAs(t, err, ErrFailed)
}

func TestParseGoogleRefusesBadReports(t *testing.T) {
	pass, err := os.ReadFile("testdata/googlebench/pass-1.7.1.json")
	if err != nil {
		t.Fatal(err)
	}
	entry := func(fields string) []byte {
		return []byte(`{"context": {}, "benchmarks": [` + fields + `]}`)
	}
	for _, c := range []struct {
		name string
		out  []byte
		kind error
	}{
		{"cut short", pass[:len(pass)/2], ErrIncomplete},
		{"nothing", nil, ErrIncomplete},
		{"console format", []byte("Benchmark   Time   CPU   Iterations\nBM_Work   1 ns   1 ns   100\n"), ErrMalformed},
		{"printed after the report", append(append([]byte{}, pass...), "done\n"...), ErrMalformed},
		{"no benchmarks", entry(""), ErrNoBenchmarks},
		{"twice", entry(`{"name": "BM_A", "run_type": "iteration", "iterations": 5, "real_time": 1, "cpu_time": 1, "time_unit": "ns"},
			{"name": "BM_A", "run_type": "iteration", "iterations": 5, "real_time": 2, "cpu_time": 2, "time_unit": "ns"}`), ErrDuplicate},
		{"aggregate", entry(`{"name": "BM_A_mean", "run_name": "BM_A", "run_type": "aggregate", "aggregate_name": "mean", "iterations": 5, "real_time": 1, "cpu_time": 1, "time_unit": "ns"}`), ErrMalformed},
		{"unknown unit", entry(`{"name": "BM_A", "iterations": 5, "real_time": 1, "cpu_time": 1, "time_unit": "fortnights"}`), ErrMalformed},
		{"counter not a number", entry(`{"name": "BM_A", "iterations": 5, "real_time": 1, "cpu_time": 1, "time_unit": "ns", "checksum": "x"}`), ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := Parse(GoogleBenchmark, c.out)
			refusedAs(t, err, c.kind)
			if run != nil {
				t.Errorf("a refused report still gave a Run: %+v", run)
			}
		})
	}
}

// Google Benchmark 1.8 reports SkipWithMessage as "skipped"; times are in
// the benchmark's unit.
func TestParseGoogleSkipsAndUnits(t *testing.T) {
	run := parse(t, GoogleBenchmark, []byte(`{"context": {}, "benchmarks": [
		{"name": "BM_A", "run_name": "BM_A", "run_type": "iteration", "iterations": 5, "real_time": 2.5, "cpu_time": 2, "time_unit": "us"},
		{"name": "BM_B", "run_name": "BM_B", "run_type": "iteration", "skipped": true, "skip_message": "no GPU", "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns"}]}`))
	if a := run.Find("BM_A"); a.NsPerOp != 2500 || a.Metrics["cpu-ns/op"] != 2000 {
		t.Errorf("BM_A = %+v", a)
	}
	if b := run.Find("BM_B"); b.Status != Skip || b.Message != "no GPU" {
		t.Errorf("BM_B = %+v", b)
	}
}
