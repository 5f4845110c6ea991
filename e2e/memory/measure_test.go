package memory

import (
	"testing"

	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
)

// The memory suite's honest control in the measurement tier: with the
// real meter, under the filter, a patch that does a quarter of the work
// is still accepted.
func TestMeasureHonestFasterPatchIsAcceptedUnderTheFilter(t *testing.T) {
	tier.Measure(t, "the candidate does a quarter of the pin's walks, each a few milliseconds, so every pair's ratio is "+
		"about 3.7; the paired signed-rank interval clears 1.02 once the pairs agree, and to keep it from doing so within "+
		"8 pairs noise would have to triple the candidate's figure against its baseline's in several pairs, where a "+
		"pair varies by a few percent on an idle machine")
	t.Parallel()
	w := newWorkspace(t, seeded)
	e := w.judge("one walk is enough", w.edit(onceFaster...))
	if e.Verdict != ledger.VerdictAccepted {
		t.Fatalf("verdict %s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	if e.Environment.Seccomp == "" || e.HasFlag(ledger.FlagTestMeter) {
		t.Errorf("seccomp %q, flags %q: want the filter and the real meter", e.Environment.Seccomp, e.Flags)
	}
}
