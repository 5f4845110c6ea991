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
// turn: a static no-op (the filter's set-up, in jail-wall-ms), one that
// makes a million system calls (the filter's cost per call, in cpu-ms),
// and one that forks a thousand children (the meter's count of each new
// process, in wall-ms: the fork waits for the meter's answer).
func BenchmarkSeccomp(b *testing.B) {
	dir := programs(b)
	writeFile(b, dir, "calls.c", "#include <unistd.h>\nint main(void) { for (int i = 0; i < 1000000; i++) getppid(); return 0; }\n", 0o644)
	writeFile(b, dir, "forks.c", "#include <sys/wait.h>\n#include <unistd.h>\nint main(void) {\n\tfor (int i = 0; i < 1000; i++) {\n\t\tpid_t p = fork();\n\t\tif (p == 0)\n\t\t\t_exit(0);\n\t\twaitpid(p, 0, 0);\n\t}\n\treturn 0;\n}\n", 0o644)
	for _, prog := range []string{"calls", "forks"} {
		cmd := exec.Command("cc", "-O2", "-static", "-o", prog, prog+".c")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Skipf("cc: %v\n%s", err, out)
		}
	}
	for _, prog := range []string{"noop-static", "calls", "forks"} {
		b.Run(prog, func(b *testing.B) {
			var cpu, wall, jailWall [2][]float64
			for i := 0; i < b.N; i++ {
				for k, off := range []bool{false, true} {
					res := run(b, Spec{Command: "/bench/" + prog, Seccomp: Seccomp{Off: off}, Mounts: []Mount{{Host: dir, Jail: "/bench", Mode: ReadOnly}}})
					cpu[k] = append(cpu[k], ms(res.CPU()))
					wall[k] = append(wall[k], ms(res.Wall))
					jailWall[k] = append(jailWall[k], ms(res.JailWall))
				}
			}
			b.ReportMetric(median(cpu[0]), "filter-cpu-ms")
			b.ReportMetric(median(cpu[1]), "nofilter-cpu-ms")
			b.ReportMetric(median(wall[0]), "filter-wall-ms")
			b.ReportMetric(median(wall[1]), "nofilter-wall-ms")
			b.ReportMetric(median(jailWall[0]), "filter-jail-wall-ms")
			b.ReportMetric(median(jailWall[1]), "nofilter-jail-wall-ms")
		})
	}
}
