package benchformat

import (
	"context"
	"slices"
	"testing"

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

// Each benchmark in a harness process of its own, at a fixed count: the
// meter's CPU time per iteration ranks the benchmarks by their work (Heavy
// does four times Light's), start-up and set-up included, however busy the
// machine.
func TestPerBenchmarkCPUTimeInTheJailRanksTheWork(t *testing.T) {
	tier.Jail(t)
	if err := jail.Check("deny"); err != nil {
		t.Skip(err)
	}
	goBench(t)
	command := `/hone/out/gobench.test -test.run='^$' -test.bench=. -test.benchtime=20000x`
	full, _ := runInJail(t, command)
	perOp := map[string][]float64{}
	for range 3 {
		for _, name := range []string{"BenchmarkLight", "BenchmarkHeavy"} {
			one, err := CommandFor(Go, command, name)
			if err != nil {
				t.Fatal(err)
			}
			run, res := runInJail(t, one)
			if Fingerprint(run, outputs) == Fingerprint(full, outputs) {
				t.Fatalf("the run for %s ran everything", name)
			}
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
	if !slices.Equal(names(full), []string{"BenchmarkAlloc", "BenchmarkHeavy", "BenchmarkLight", "BenchmarkMisbehave",
		"BenchmarkSizes/a[b](c)", "BenchmarkSizes/n=10", "BenchmarkSizes/utf-8"}) {
		t.Errorf("the jail's run: %q", names(full))
	}
}

// A candidate can do the benchmark's work before the harness starts its
// timer (in init, for the inputs it knows the benchmark will use): the
// harness's ns/op then shows a huge gain. The meter charges the whole
// process, so the per-op CPU time does not move.
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
	var harness, meter [2][]float64
	for range 3 {
		for side, env := range []string{"HIDE=0", "HIDE=20001"} {
			run, res := runInJail(t, one, env)
			v, err := CPUPerOp(run, "BenchmarkLight", res.CPU())
			if err != nil {
				t.Fatal(err)
			}
			harness[side] = append(harness[side], run.Benchmarks[0].NsPerOp)
			meter[side] = append(meter[side], v)
		}
	}
	byHarness := median(harness[0]) / median(harness[1])
	byMeter := median(meter[0]) / median(meter[1])
	t.Logf("speedup of the hidden work: %.1fx by the harness's ns/op, %.2fx by the meter's CPU per op", byHarness, byMeter)
	if byHarness < 5 {
		t.Fatalf("the attack did not fool the harness (%.1fx); the test proves nothing", byHarness)
	}
	if byMeter > 1.1 {
		t.Errorf("the meter saw a %.2fx speedup from work moved before the timer", byMeter)
	}
}

// median of an odd number of figures.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
