package verdict

import (
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// The tests whose subject is the real meter: what the clock and the
// instruction counters see. They run in the measurement tier alone, on an
// idle machine; every other test of this package is decided by the work
// its programs declare or by samples fed to the flow.

// A comment changes nothing the instructions tier can count.
func TestMeasureCommentOnlyIsNoChangeInTheInstructionsTier(t *testing.T) {
	tier.Measure(t, "a comment leaves the code and its input as they were, so perf or cachegrind counts the same instructions on both sides of "+
		"every pair to within 1e-4, two hundred times inside the 2% threshold: neither faster nor slower can be decided, whatever the load")
	// Valgrind starts slowly; a smaller workload keeps the test quick.
	f := newFixture(t, "ctarget", "c", strings.Replace(strings.Replace(cToml, `run = "$HONE_OUT/prog {seed}"
`, `run = "$HONE_OUT/prog --small {seed}"
`, 2), "max_pairs = 10\n", "max_pairs = 5\nmetric = \"instructions\"\n", 1))
	commit := f.patch(map[string]func(string) string{"prog.c": replace("static int selftest", "/* a comment */\nstatic int selftest")})
	e := f.verdictOf(commit, Options{})
	f.want(e, ledger.VerdictRejectedBench, ReasonNoChange)
	if e.HasFlag(ledger.FlagTestMeter) || e.Environment.InstructionsVia == "" || e.Bench.Stat(workspace.MetricInstructions).BaselineMedian < 1e6 {
		t.Errorf("flags %v, instructions counted via %q: %+v", e.Flags, e.Environment.InstructionsVia, e.Bench.Metrics)
	}
}

// The real meter's honest control: a patch that walks a quarter of the
// steps is accepted on the clock, and the entry is the real meter's.
func TestMeasureMuchFasterIsAcceptedOnTheClock(t *testing.T) {
	tier.Measure(t, "a quarter of the walks costs the sample 2.5 to 3.3 times less CPU time (20.4 ms against 8.1 ms on a two-core machine, "+
		"3.31x [3.19, 3.45] beside other suites), so a pair shows no speedup only if one of its runs is slowed 2.5 times against the "+
		"other: the 10-pair look sees every pair faster and its interval's low end far above 1.02")
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), Options{})
	f.want(e, ledger.VerdictAccepted, ReasonImproved)
	if e.HasFlag(ledger.FlagTestMeter) {
		t.Errorf("flags %v: not the real meter's entry", e.Flags)
	}
}

// Calibration on the sample target: two builds of the pin compared with
// each other are never accepted, and a candidate made 50% slower by
// injected work is caught in every session.
func TestMeasureCalibrationAcceptsNoAAAndCatchesAFiftyPercentSlowdown(t *testing.T) {
	tier.Measure(t, "an A/A session accepts only if its speedup interval clears 1.02 with no true change: at this idle tier's run noise "+
		"(1-2% on a 20 ms run) that needs an estimate four standard errors out, under 1e-4 a session, and the rule's simulation "+
		"(TestDecisionRuleHoldsItsErrorRatesInSimulation) sees none in 10,000 A/A verdicts on noisier machines; the injected 50% "+
		"is 25 times the threshold, so every pair shows it and the 10-pair look decides slower unless a run's noise passes 40%")
	// One layout: the layout shift moves real code, and what it does to
	// this machine's time is no chance event to bound.
	f := newFixture(t, "ctarget", "c", cToml)
	c, err := Calibrate(context.Background(), f.ws, "c", CalibrationOptions{Sessions: 2, Inject: []float64{0.5}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", c.Summary)
	if c.AA.Sessions != 2 || c.AA.Accepts != 0 || len(c.Injected) != 1 || c.Injected[0].Sessions != 2 || c.Injected[0].Detected != 2 ||
		!strings.Contains(c.Summary, "A/A: 0/2 false accepts") || !strings.Contains(c.Summary, "50% slowdown: 2/2 detected") {
		t.Fatalf("A/A %+v, injected %+v: %s", c.AA, c.Injected, c.Summary)
	}
}
