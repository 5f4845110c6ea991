package stats

import (
	"math"
	"testing"
)

// The known boundaries of three equally spaced looks at one-sided 0.025
// with Lan-DeMets spending: O'Brien-Fleming type 3.71, 2.51, 1.99; Pocock
// type about 2.29 at every look.
func TestLevelsMatchPublishedBoundaries(t *testing.T) {
	for _, tc := range []struct {
		spending string
		want     []float64
	}{
		{OBrienFleming, []float64{3.710, 2.511, 1.993}},
		{Pocock, []float64{2.29, 2.29, 2.29}},
	} {
		lv := Levels(tc.spending, 0.025, []int{10, 20, 30}, 30)
		for i, a := range lv {
			z := normalQuantile(1 - a)
			if math.Abs(z-tc.want[i]) > 0.02 {
				t.Errorf("%s look %d: z = %.3f, want %.3f", tc.spending, i+1, z, tc.want[i])
			}
		}
		t.Logf("%s: levels %v", tc.spending, lv)
	}
}

// One look is a fixed-size test: its level is alpha itself.
func TestOneLookSpendsAlpha(t *testing.T) {
	for _, s := range []string{OBrienFleming, Pocock} {
		if lv := Levels(s, 0.025, []int{30}, 30); math.Abs(lv[0]-0.025) > 1e-9 {
			t.Errorf("%s: one look at %v", s, lv[0])
		}
	}
}
