package verdict

import (
	"fmt"

	"github.com/hone-perf/hone/ledger"
)

// Honesty is what a target's record of accepts can claim once the number
// of tries is counted: an optimizer that floods near-no-op variants, each
// judged once, harvests whatever false-accept rate the protocol has.
type Honesty struct {
	Target string `json:"target"`
	// Judged counts verdicts the bench decided (accepted,
	// needs-human-review, rejected-bench), Accepted the accepted ones.
	Judged   int `json:"judged"`
	Accepted int `json:"accepted"`
	// FalseAccepts is how many accepts the protocol's false-accept rate
	// alone would explain: Judged times (1-confidence)/2, the rate the
	// sequential design holds each verdict of a candidate no faster than
	// the threshold to (an upper bound: most candidates are further from
	// it).
	FalseAccepts float64 `json:"false_accepts"`
}

// HonestyOf tallies the verdict words of a target's judged patches.
func HonestyOf(target string, verdicts []string, confidence float64) Honesty {
	h := Honesty{Target: target}
	for _, v := range verdicts {
		switch v {
		case ledger.VerdictAccepted:
			h.Accepted++
			h.Judged++
		case ledger.VerdictNeedsHumanReview, ledger.VerdictRejectedBench:
			h.Judged++
		}
	}
	h.FalseAccepts = float64(h.Judged) * (1 - confidence) / 2
	return h
}

// String is the one line every view shows.
func (h Honesty) String() string {
	return fmt.Sprintf("%s: %d accepted of %d judged; the protocol's false-accept rate alone (at most %.3g%% a verdict) would explain up to %.1f of them",
		h.Target, h.Accepted, h.Judged, 100*h.FalseAccepts/float64(max(h.Judged, 1)), h.FalseAccepts)
}
