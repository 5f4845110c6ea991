package jail

import (
	"os/exec"
	"testing"
)

// What the system call filter costs a run:
//
//	go test -run '^$' -bench Seccomp -benchtime 30x ./internal/jail/
//
// Each iteration runs the same program with the filter and without it, in
// turn: a static no-op (the filter's set-up, in jail-wall-ms) and one that
// makes a million system calls (the filter's cost per call, in cpu-ms).
func BenchmarkSeccomp(b *testing.B) {
	dir := programs(b)
	writeFile(b, dir, "calls.c", "#include <unistd.h>\nint main(void) { for (int i = 0; i < 1000000; i++) getppid(); return 0; }\n", 0o644)
	cmd := exec.Command("cc", "-O2", "-static", "-o", "calls", "calls.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("cc: %v\n%s", err, out)
	}
	for _, prog := range []string{"noop-static", "calls"} {
		b.Run(prog, func(b *testing.B) {
			var cpu, wall [2][]float64
			for i := 0; i < b.N; i++ {
				for k, off := range []bool{false, true} {
					res := run(b, Spec{Command: "/bench/" + prog, Seccomp: Seccomp{Off: off}, Mounts: []Mount{{Host: dir, Jail: "/bench", Mode: ReadOnly}}})
					cpu[k] = append(cpu[k], ms(res.CPU()))
					wall[k] = append(wall[k], ms(res.JailWall))
				}
			}
			b.ReportMetric(median(cpu[0]), "filter-cpu-ms")
			b.ReportMetric(median(cpu[1]), "nofilter-cpu-ms")
			b.ReportMetric(median(wall[0]), "filter-jail-wall-ms")
			b.ReportMetric(median(wall[1]), "nofilter-jail-wall-ms")
		})
	}
}
