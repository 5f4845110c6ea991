package m

import (
	"fmt"
	"os"
	"strconv"
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

// BenchmarkSeeded folds inputs drawn from the verdict's seed (HONE_SEED),
// so what it computes, and its checksum, change with the seed: the one
// benchmark here hone can take as proof that a table of answers did not
// make a patch fast.
func BenchmarkSeeded(b *testing.B) {
	seed, _ := strconv.ParseUint(os.Getenv("HONE_SEED"), 10, 64)
	var s uint64
	for i := 0; i < b.N; i++ {
		s += Big(seed + uint64(i%16))
	}
	sink = s
	b.ReportMetric(float64(s%1000003), "checksum")
}
