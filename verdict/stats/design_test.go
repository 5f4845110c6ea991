package stats

import (
	"math"
	"testing"
)

// Lan-DeMets spending at three equally spaced looks, one-sided 0.025: the
// O'Brien-Fleming type spends about 0.0001 by the first look and 0.006 by
// the second (its boundaries z = 3.71 and 2.51); the Pocock type about
// 0.0113 by the first. The levels add up to alpha.
func TestLevelsSpendAlphaOverTheLooks(t *testing.T) {
	for _, tc := range []struct {
		spending string
		first    float64
		second   float64
	}{
		{OBrienFleming, 1.04e-4, 6.0e-3},
		{Pocock, 0.01132, 0.01132 + 0.00764},
	} {
		lv := Levels(tc.spending, 0.025, []int{10, 20, 30}, 30)
		if math.Abs(lv[0]-tc.first) > 0.02*tc.first || math.Abs(lv[0]+lv[1]-tc.second) > 0.02*tc.second {
			t.Errorf("%s: levels %v", tc.spending, lv)
		}
		if sum := lv[0] + lv[1] + lv[2]; math.Abs(sum-0.025) > 1e-12 {
			t.Errorf("%s: levels sum to %v", tc.spending, sum)
		}
	}
}

// One look is a fixed-size test: its level is alpha itself.
func TestOneLookSpendsAlpha(t *testing.T) {
	for _, s := range []string{OBrienFleming, Pocock} {
		if lv := Levels(s, 0.025, []int{30}, 30); math.Abs(lv[0]-0.025) > 1e-12 {
			t.Errorf("%s: one look at %v", s, lv[0])
		}
	}
}
