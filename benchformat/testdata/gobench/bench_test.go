// The harness of benchformat's tests: a tiny benchmark suite over Work.
// HONE_SEED picks the input; BENCH_FAIL, BENCH_SKIP, BENCH_PANIC and
// BENCH_PRINT make one benchmark misbehave.
package gobench

import (
	"fmt"
	"os"
	"testing"
)

var sink uint64

func BenchmarkLight(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += Work(seed+uint64(i), 1000)
	}
	b.ReportMetric(float64(Work(seed, 1000)%1000000007), "checksum")
}

func BenchmarkHeavy(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += Work(seed+uint64(i), 4000)
	}
	b.ReportMetric(float64(Work(seed, 4000)%1000000007), "checksum")
}

func BenchmarkSizes(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"n=10", 10}, {"utf-8", 100}, {"a[b](c)", 30}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink += Work(uint64(i), c.n)
			}
		})
	}
}

func BenchmarkAlloc(b *testing.B) {
	for i := 0; i < b.N; i++ {
		buf := make([]byte, 64+i%2)
		sink += uint64(len(buf))
	}
}

func BenchmarkMisbehave(b *testing.B) {
	switch {
	case os.Getenv("BENCH_FAIL") != "":
		b.Fatal("boom: the answer is wrong")
	case os.Getenv("BENCH_SKIP") != "":
		b.Skip("not on this machine")
	case os.Getenv("BENCH_PANIC") != "":
		panic("crashed")
	case os.Getenv("BENCH_PRINT") != "":
		fmt.Println("progress: halfway")
	}
	for i := 0; i < b.N; i++ {
		sink += Work(uint64(i), 10)
	}
}

func TestNothing(t *testing.T) {}

func TestMain(m *testing.M) {
	code := m.Run()
	ReportHidden()
	os.Exit(code)
}
