package verdict

import (
	"math"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// Forty near-no-op variants judged once each at 95% may harvest up to one
// false accept: a record of one accept in forty is what chance alone gives.
func TestHonestyCountsWhatChanceAloneWouldAccept(t *testing.T) {
	words := []string{ledger.VerdictAccepted, ledger.VerdictRejectedGate, ledger.VerdictError}
	for range 39 {
		words = append(words, ledger.VerdictRejectedBench)
	}
	h := HonestyOf("c", words, 0.95)
	if h.Judged != 40 || h.Accepted != 1 || math.Abs(h.FalseAccepts-1) > 1e-9 {
		t.Fatalf("%+v", h)
	}
	if s := h.String(); !strings.Contains(s, "1 accepted of 40 judged") || !strings.Contains(s, "up to 1.0 of them") || !strings.Contains(s, "2.5%") {
		t.Errorf("%q", s)
	}
}
