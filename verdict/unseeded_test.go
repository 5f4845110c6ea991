package verdict

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// A table of precomputed answers passes every output check of a target
// whose commands never see the seed: the patch that walks a quarter of the
// steps stands for it here (its output equals the baseline's either way),
// and, faster, it needs a person instead of being accepted.
func TestPrecomputedAnswersOnAnUnseededTargetAreNeverAccepted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, run, why string }{
		{"no command mentions the seed", `$HONE_OUT/prog --small`, "mentions"},
		{"the seed is mentioned and ignored", `$HONE_OUT/prog --small # {seed}`, "printed the same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "ctarget", "c", strings.ReplaceAll(cToml, `"$HONE_OUT/prog {seed}"`, `"`+tc.run+`"`))
			e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), Options{})
			f.want(e, ledger.VerdictNeedsHumanReview, ReasonUnseeded)
			if !e.HasFlag(ledger.FlagUnseeded) || !strings.HasPrefix(e.Summary, unseededPrefix) || !strings.Contains(e.Detail, tc.why) {
				t.Errorf("flags %v, summary %q, detail %q", e.Flags, e.Summary, e.Detail)
			}
		})
	}
}
