package gaming

import (
	"testing"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
)

// The measurement tier of the gaming suite: the real meter, on the games
// whose subject is the meter itself (what cpu-time or the instruction
// counters see), and the honest patches it must still accept. The default
// tier proves every other game by declared work and outputs.

// honestChance is why an honest patch fails the measurement tier less
// than once in a thousand runs.
const honestChance = "the candidate does a quarter of the pin's walks, so every pair's ratio is about 3.4 in " +
	"cpu-time and 3.9 in instructions; the paired signed-rank interval clears 1.02 once the pairs agree, and to keep " +
	"it from doing so within 8 pairs noise would have to triple the candidate's figure against its baseline's in " +
	"several pairs, where a pair varies by a few percent on an idle machine (valgrind's counts not at all)"

func TestMeasureHonestPatchesAreAccepted(t *testing.T) {
	tier.Measure(t, honestChance)
	t.Parallel()
	a := newGamingArena(t)
	e, _ := a.Judge("one walk is enough", a.Prog("#define REPS 4", onceFaster))
	testbed.WantVerdict(t, e, ledger.VerdictAccepted)
	if e.HasFlag(ledger.FlagTestMeter) {
		t.Errorf("measured by declared work in the measurement tier: flags %q", e.Flags)
	}
	e, _ = a.judgeTarget("ci", "one walk is enough, counted", a.Prog("#define REPS 4", onceFaster))
	testbed.WantVerdict(t, e, ledger.VerdictAccepted)
	if e.Bench == nil || e.Bench.Check == nil {
		t.Errorf("no cpu-time check confirmed the instructions: %s", e.Detail)
	}
}

// A child that does the work and is reaped by the kernel (SIGCHLD
// ignored, so no one waits for it) must be charged to the run: the
// parent alone costs microseconds.
func TestMeasureReapedChildIsCharged(t *testing.T) {
	tier.Measure(t, "charged with its reaped child, the candidate does twice the pin's walks, so every pair's cpu-time "+
		"ratio is about 0.5; accepting it needs the signed-rank interval's low end above 1.02, that is most pairs "+
		"reversing a twofold difference, which noise of a few percent a pair never does (the rule's 0.025 false-accept "+
		"rate is for a candidate equal to its baseline)")
	t.Parallel()
	a := newGamingArena(t)
	e, _ := a.Judge("a child does the work", a.reapedChild())
	notAccepted(t, e, ledger.VerdictRejectedBench)
	if !e.Environment.Cgroup || e.Bench == nil || e.Bench.CandidateUnreapedSeconds <= e.Bench.BaselineUnreapedSeconds {
		t.Errorf("the reaped child's CPU was not charged: cgroup %v, bench %+v", e.Environment.Cgroup, e.Bench)
	}
}

// A program that does a quarter of its work when valgrind counts it, and
// twice its work when nobody does: the instruction counts say faster, and
// the cpu-time check that an instructions-tier "faster" needs says no.
func TestMeasureFastOnlyUnderValgrind(t *testing.T) {
	tier.Measure(t, "uncounted, the candidate does twice the pin's walks, so the cpu-time check's pairs are each "+
		"about 0.5; confirming the counted speedup needs that check's interval low end above 1.02, most pairs "+
		"reversing a twofold difference, which noise of a few percent a pair never does")
	t.Parallel()
	a := newGamingArena(t)
	e, _ := a.judgeTarget("ci", "cheaper when counted", a.Prog(
		"\tunsigned long long r = 0;", "\tunsigned long long r = 0;\n\tint reps = getenv(\"LD_PRELOAD\") && strstr(getenv(\"LD_PRELOAD\"), \"vgpreload\") ? 1 : 2 * REPS;",
		"k < REPS", "k < reps"))
	notAccepted(t, e, ledger.VerdictNeedsHumanReview, ledger.VerdictRejectedBench)
	if e.Bench == nil || e.Bench.Check == nil {
		t.Errorf("no cpu-time check ran: %s", e.Detail)
	}
}
