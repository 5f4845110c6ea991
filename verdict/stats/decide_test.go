package stats

import "testing"

func TestDecide(t *testing.T) {
	in := func(lo, hi float64) Interval { return Interval{Low: lo, High: hi, Bounded: true} }
	wide := Interval{Low: 0.5, High: 2}
	for _, tc := range []struct {
		name       string
		diff, same Interval
		want       string
	}{
		{"clearly faster", in(1.1, 1.3), in(1.12, 1.28), Faster},
		{"faster but under the threshold", in(1.005, 1.015), in(1.006, 1.014), Same},
		{"clearly slower", in(0.9, 0.95), in(0.91, 0.94), Slower},
		{"same within the threshold", in(0.99, 1.01), in(0.992, 1.008), Same},
		{"straddles the threshold", in(0.99, 1.05), in(0.995, 1.04), MeasureMore},
		{"the look's level is out of reach", Interval{Low: 1.1, High: 1.3}, Interval{Low: 1.1, High: 1.3}, MeasureMore},
		{"same only at the equivalence level", wide, in(0.99, 1.01), Same},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(10, tc.diff, tc.same, 0.02); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
	if got := Decide(0, in(1.1, 1.3), in(1.1, 1.3), 0.02); got != MeasureMore {
		t.Errorf("no pairs: %s", got)
	}
}

// The rule of older entries, kept for their recomputation, with its p term.
func TestDecideFixed(t *testing.T) {
	for _, tc := range []struct {
		name string
		ci   Interval
		p    float64
		want string
	}{
		{"clearly faster", Interval{Low: 1.1, High: 1.3}, 0.001, Faster},
		{"CI clears the threshold but p does not", Interval{Low: 1.03, High: 1.3}, 0.2, MeasureMore},
		{"clearly slower", Interval{Low: 0.9, High: 0.95}, 0.001, Slower},
		{"same within the threshold", Interval{Low: 0.99, High: 1.01}, 0.6, Same},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecideFixed(10, tc.ci, tc.p, 0.02, 0.95); got != tc.want {
				t.Errorf("DecideFixed = %s, want %s", got, tc.want)
			}
		})
	}
}
