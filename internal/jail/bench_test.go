package jail

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The jail's costs, as the issues ask them to be measured:
//
//	go test -run '^$' -bench . -benchtime 40x ./internal/jail/
//
// BenchmarkNoop runs no-op C programs (static and dynamic) through the jail
// and directly: cpu-ms is what a verdict would record for the jailed run,
// direct-cpu-ms the same exec's own floor; overhead-ms is the jail's added
// wall time per run (JailWall - Wall) and jail-wall-ms vs direct-wall-ms
// compares a whole jailed run with a plain fork and exec.
// BenchmarkLoopRatio runs the same loop N and 2N times, in pairs, and
// reports the median ratio of measured CPU time (true ratio 2.00).

const loopC = `#include <stdlib.h>
int main(int argc, char **argv) {
	long n = atol(argv[1]);
	volatile unsigned long x = 1;
	for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
	return 0;
}
`

// programs compiles the benchmark's C programs into a fresh directory.
func programs(b *testing.B) string {
	b.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		b.Skip("no C compiler")
	}
	dir := b.TempDir()
	writeFile(b, dir, "noop.c", "int main(void) { return 0; }\n", 0o644)
	writeFile(b, dir, "loop.c", loopC, 0o644)
	for _, c := range [][]string{
		{"-O2", "-o", "noop-dynamic", "noop.c"},
		{"-O2", "-static", "-o", "noop-static", "noop.c"},
		{"-O2", "-static", "-o", "loop", "loop.c"},
	} {
		cmd := exec.Command("cc", c...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Skipf("cc %v: %v\n%s", c, err, out)
		}
	}
	return dir
}

func BenchmarkNoop(b *testing.B) {
	dir := programs(b)
	for _, kind := range []string{"static", "dynamic"} {
		b.Run(kind, func(b *testing.B) {
			prog := "noop-" + kind
			var cpu, wall, jailWall, overhead, dcpu, dwall []float64
			for i := 0; i < b.N; i++ {
				res := run(b, Spec{Command: "/bench/" + prog, Mounts: []Mount{{Host: dir, Jail: "/bench", Mode: ReadOnly}}})
				cpu = append(cpu, ms(res.CPU()))
				wall = append(wall, ms(res.Wall))
				jailWall = append(jailWall, ms(res.JailWall))
				overhead = append(overhead, ms(res.JailWall-res.Wall))
				c, w := direct(b, filepath.Join(dir, prog))
				dcpu, dwall = append(dcpu, ms(c)), append(dwall, ms(w))
			}
			b.ReportMetric(median(cpu), "cpu-ms")
			b.ReportMetric(median(dcpu), "direct-cpu-ms")
			b.ReportMetric(median(wall), "wall-ms")
			b.ReportMetric(median(dwall), "direct-wall-ms")
			b.ReportMetric(median(jailWall), "jail-wall-ms")
			b.ReportMetric(median(overhead), "overhead-ms")
		})
	}
}

func BenchmarkLoopRatio(b *testing.B) {
	dir := programs(b)
	const n = 40_000_000
	spec := func(iters int) Spec {
		return Spec{Command: "/bench/loop " + strconv.Itoa(iters), Mounts: []Mount{{Host: dir, Jail: "/bench", Mode: ReadOnly}}}
	}
	var jailed, plain, single []float64
	for i := 0; i < b.N; i++ {
		// Alternate which side goes first, as a verdict's pairs do.
		var one, two *Result
		if i%2 == 0 {
			one, two = run(b, spec(n)), run(b, spec(2*n))
		} else {
			two, one = run(b, spec(2*n)), run(b, spec(n))
		}
		jailed = append(jailed, float64(two.CPU())/float64(one.CPU()))
		single = append(single, ms(one.CPU()))
		c1, _ := direct(b, filepath.Join(dir, "loop"), strconv.Itoa(n))
		c2, _ := direct(b, filepath.Join(dir, "loop"), strconv.Itoa(2*n))
		plain = append(plain, float64(c2)/float64(c1))
	}
	b.ReportMetric(median(jailed), "ratio")
	b.ReportMetric(median(plain), "direct-ratio")
	b.ReportMetric(median(single), "n-cpu-ms")
}

// direct runs a program with a plain fork and exec, as the floor the jail is
// compared with.
func direct(b *testing.B, prog string, args ...string) (cpu, wall time.Duration) {
	cmd := exec.Command(prog, args...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	wall = time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), wall
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
