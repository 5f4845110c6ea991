package verdict

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// A table of precomputed answers passes every output check of a target
// whose commands never see the seed: the 4x patch stands for it here (its
// output equals the baseline's either way), and is not accepted.
func TestPrecomputedAnswersOnAnUnseededTargetAreNeverAccepted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real verdicts")
	}
	for _, tc := range []struct{ name, run, why string }{
		{"no command mentions the seed", `$HONE_OUT/prog --small`, "mentions"},
		{"the seed is mentioned and ignored", `$HONE_OUT/prog --small # {seed}`, "printed the same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "ctarget", "c", strings.ReplaceAll(cToml, `"$HONE_OUT/prog {seed}"`, `"`+tc.run+`"`))
			e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), Options{})
			// Measured faster (the usual case) it needs a person: for the
			// seed, or before that for its layouts (the --small run is
			// short enough for placement to matter); on a loaded machine
			// the bench may not settle, and never accepts.
			if e.Verdict == ledger.VerdictAccepted || e.Verdict == ledger.VerdictNeedsHumanReview && e.Reason != ReasonUnseeded && e.Reason != ReasonLayout {
				t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
			}
			if !e.HasFlag(ledger.FlagUnseeded) || !strings.HasPrefix(e.Summary, unseededPrefix) || !strings.Contains(e.Detail, tc.why) {
				t.Errorf("flags %v, summary %q, detail %q", e.Flags, e.Summary, e.Detail)
			}
		})
	}
}
