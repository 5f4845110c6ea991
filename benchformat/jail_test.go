package benchformat

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/tier"
)

// runInJail runs a bench command the way a verdict will: in the jail, the
// harness binary read-only under /hone/out, and measured by the meter.
func runInJail(t *testing.T, command string, env ...string) (*Run, *jail.Result) {
	t.Helper()
	res, err := jail.Run(context.Background(), jail.Spec{
		Command: command,
		Env:     append([]string{"HONE_SEED=7"}, env...),
		Mounts:  []jail.Mount{{Host: scratch, Jail: "/hone/out", Mode: jail.ReadOnly}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success() {
		t.Fatalf("%s: %s\n%s", command, res.Describe(), res.Stderr.Bytes())
	}
	return parse(t, Go, res.Stdout.Bytes()), res
}

// Each benchmark runs in a harness process of its own: the command
// CommandFor gives runs that benchmark alone in the jail, so the meter's
// CPU time for the process is that benchmark's, start-up and set-up
// included.
func TestEachBenchmarkRunsAloneInTheJail(t *testing.T) {
	tier.Jail(t)
	if err := jail.Check("deny"); err != nil {
		t.Skip(err)
	}
	goBench(t)
	command := `/hone/out/gobench.test -test.run='^$' -test.bench=. -test.benchtime=20000x`
	full, _ := runInJail(t, command)
	if !slices.Equal(names(full), []string{"BenchmarkAlloc", "BenchmarkHeavy", "BenchmarkLight", "BenchmarkMisbehave",
		"BenchmarkSizes/a[b](c)", "BenchmarkSizes/n=10", "BenchmarkSizes/utf-8"}) {
		t.Errorf("the jail's run: %q", names(full))
	}
	if _, err := CPUPerOp(full, "BenchmarkLight", time.Second); err == nil {
		t.Errorf("CPUPerOp charged a run of every benchmark to one of them")
	}
	for _, name := range []string{"BenchmarkLight", "BenchmarkHeavy", "BenchmarkSizes/utf-8"} {
		one, err := CommandFor(Go, command, name)
		if err != nil {
			t.Fatal(err)
		}
		run, res := runInJail(t, one)
		if got := names(run); !slices.Equal(got, []string{name}) {
			t.Fatalf("the run for %s ran %q", name, got)
		}
		v, err := CPUPerOp(run, name, res.CPU())
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(res.CPU().Nanoseconds()) / 20000; v != want {
			t.Errorf("%s: CPU per op %v, want the process's CPU over its 20000 iterations, %v", name, v, want)
		}
	}
}

// The measurement tier's half of the test above: at a fixed count the
// meter's CPU time per iteration ranks the benchmarks by their work (Heavy
// does four times Light's).
func TestMeasurePerBenchmarkCPUTimeInTheJailRanksTheWork(t *testing.T) {
	tier.Measure(t, "Heavy walks four times Light's steps per iteration (80M against 20M mixes, about 60 ms against 20 ms of CPU "+
		"on top of a few ms of start-up); the test fails only if the median of three processes' CPU times is off by half or more, "+
		"where one process's CPU time on an idle machine varies by a few per cent")
	if err := jail.Check("deny"); err != nil {
		t.Fatal(err)
	}
	goBench(t)
	command := `/hone/out/gobench.test -test.run='^$' -test.bench=. -test.benchtime=20000x`
	perOp := map[string][]float64{}
	for range 3 {
		for _, name := range []string{"BenchmarkLight", "BenchmarkHeavy"} {
			one, err := CommandFor(Go, command, name)
			if err != nil {
				t.Fatal(err)
			}
			run, res := runInJail(t, one)
			v, err := CPUPerOp(run, name, res.CPU())
			if err != nil {
				t.Fatal(err)
			}
			perOp[name] = append(perOp[name], v)
			t.Logf("%s: meter %.0f ns/op cpu; harness %.0f ns/op wall; run %v cpu, %v wall, jail %v",
				name, v, run.Benchmarks[0].NsPerOp, res.CPU(), res.Wall, res.JailWall)
		}
	}
	ratio := median(perOp["BenchmarkHeavy"]) / median(perOp["BenchmarkLight"])
	t.Logf("Heavy/Light per-op CPU: %.2f (the work's ratio is 4)", ratio)
	if ratio < 2 || ratio > 6 {
		t.Errorf("Heavy/Light = %.2f from %v", ratio, perOp)
	}
}

// A candidate can do the benchmark's work before the harness starts its
// timer (in init, for the inputs it knows the benchmark will use): the
// harness's ns/op then shows a huge gain. The meter charges the whole
// process, so the hidden work stays on the bill. The witness is the
// process's own count: its init reports the CPU time it had used when init
// ended, and the meter's figure for the process may never be less. Kernel
// CPU counters only grow, so no load on the machine can fail this.
func TestCandidateCannotHideWorkBeforeTheTimerStarts(t *testing.T) {
	tier.Jail(t)
	if err := jail.Check("deny"); err != nil {
		t.Skip(err)
	}
	goBench(t)
	one, err := CommandFor(Go, `/hone/out/gobench.test -test.bench=. -test.benchtime=20000x`, "BenchmarkLight")
	if err != nil {
		t.Fatal(err)
	}
	honest, _ := runInJail(t, one, "HIDE=0")
	hiding, res := runInJail(t, one, "HIDE=20001")
	byHarness := honest.Benchmarks[0].NsPerOp / hiding.Benchmarks[0].NsPerOp
	// That the attack works is the candidate's own count, not the ratio of
	// two timed runs (which load can shrink): no call of Work after init
	// mixed, so every iteration the harness timed was a lookup.
	if n := report(t, string(res.Stderr.Bytes()), "mixed-after-init: "); n != 0 {
		t.Fatalf("%d calls of Work mixed after init: the work was not all hidden, and the test proves nothing", n)
	}
	hidden := time.Duration(report(t, string(res.Stderr.Bytes()), "init-cpu-ns: "))
	if hidden <= 0 {
		t.Fatalf("init reports no CPU time: %v", hidden)
	}
	perOp, err := CPUPerOp(hiding, "BenchmarkLight", res.CPU())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the harness saw a %.1fx speedup; init spent %v before the timer; the meter charged the process %v (%.0f ns/op)",
		byHarness, hidden, res.CPU(), perOp)
	if res.CPU() < hidden {
		t.Errorf("the meter charged the process %v, less than the %v its init spent before the timer started", res.CPU(), hidden)
	}
	if perOp*20000 < float64(hidden.Nanoseconds()) {
		t.Errorf("CPU per op %.0f ns leaves out the %v spent before the timer", perOp, hidden)
	}
}

// report reads the number on the hiding candidate's stderr line that
// starts with prefix ("init-cpu-ns: ", "mixed-after-init: ").
func report(t *testing.T, stderr, prefix string) int64 {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatalf("the candidate's report %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("the hiding candidate printed no %q line; its stderr:\n%s", prefix, stderr)
	return 0
}

// median of an odd number of figures.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
