package m

import (
	"fmt"
	"os"
	"testing"
)

// TestMain declares the rounds folded (hone-work on stderr), 16 units a
// round: hone's test builds measure a run by the work it declares, and
// size a benchmark's counts by it, so a heavier unit keeps the runs short.
func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Fprintf(os.Stderr, "hone-work: %d\n", 16*work)
	os.Exit(code)
}

func TestValues(t *testing.T) {
	if Big(42) != 13450534357703051242 || Small(7) != 2019352398190953399 {
		t.Fatal("wrong values")
	}
}

var sink uint64

func BenchmarkBig(b *testing.B) {
	var s uint64
	for i := 0; i < b.N; i++ {
		s += Big(42)
	}
	sink = s
	b.ReportMetric(float64(s%1000003), "checksum")
}

func BenchmarkSmall(b *testing.B) {
	var s uint64
	for i := 0; i < b.N; i++ {
		s += Small(7)
	}
	sink = s
	b.ReportMetric(float64(s%1000003), "checksum")
}
