package m

import "testing"

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
