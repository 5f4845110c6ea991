package verdict

import "testing"

// The count grows until the loop is most of a run and long enough to
// measure; a run at 2N that a busy machine made cost twice a tiny run at N
// does not stop it.
func TestNextCountGrowsUntilTheLoopDominatesAndCanBeMeasured(t *testing.T) {
	for _, c := range []struct {
		name        string
		n           int
		short, long float64
		lo, hi      int
	}{
		{"the loop dominates", 1000, 0.2, 0.39, 1000, 1000},
		{"start-up dominates, at most sixteenfold a round", 1000, 0.1, 0.11, 16_000, 16_000},
		{"no measurable loop", 1000, 0.01, 0.009, 16_000, 16_000},
		{"noise that doubles a tiny run", 200, 0.003, 0.006, 3200, 3200},
		{"a short loop that dominates", 1000, 0.011, 0.021, 5000, 6000},
	} {
		got := nextCount(c.n, c.short, c.long)
		if got < c.lo || got > c.hi {
			t.Errorf("%s: nextCount(%d, %v, %v) = %d, want %d to %d", c.name, c.n, c.short, c.long, got, c.lo, c.hi)
		}
	}
}
