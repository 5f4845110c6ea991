package benchformat

import (
	"math"
	"testing"
)

func TestGeomeansArePerPair(t *testing.T) {
	gb, gc := Geomeans([]Samples{{"A", []float64{4, 1}, []float64{1, 1}}, {"B", []float64{1, 9}, []float64{4, 4}}})
	want := [][]float64{{2, 3}, {2, 2}}
	for i, got := range [][]float64{gb, gc} {
		for j := range got {
			if math.Abs(got[j]-want[i][j]) > 1e-12 {
				t.Errorf("geomeans = %v, %v; want %v", gb, gc, want)
			}
		}
	}
	if b, c := Geomeans(nil); b != nil || c != nil {
		t.Errorf("no benchmarks: %v %v", b, c)
	}
}
