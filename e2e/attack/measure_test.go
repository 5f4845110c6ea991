package attack

import (
	"testing"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
)

// The attack arena's honest control in the measurement tier: with the
// real meter, in the same jail the attacks meet, a patch that does a
// quarter of the work is still accepted.
func TestMeasureHonestPatchIsAcceptedInTheAttackArena(t *testing.T) {
	tier.Measure(t, "the candidate does a quarter of the pin's walks and nothing else, so every pair's ratio is "+
		"about 3.4; the paired signed-rank interval clears 1.02 once the pairs agree, and to keep it from doing so "+
		"within 8 pairs noise would have to more than triple the candidate's figure against its baseline's in several "+
		"pairs, where a pair varies by a few percent on an idle machine")
	t.Parallel()
	a := newArena(t, 0)
	e, _ := a.Judge("one walk is enough", a.Prog("#define REPS 4", "#define REPS 1"))
	testbed.WantVerdict(t, e, ledger.VerdictAccepted)
	if e.HasFlag(ledger.FlagTestMeter) {
		t.Errorf("measured by declared work in the measurement tier: flags %q", e.Flags)
	}
}
