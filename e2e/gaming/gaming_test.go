package gaming

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/ledger"
)

// The gaming suite's games of the running program (testbed's gaming.go
// tells the whole suite's rules): a patch that tells a bench run from the
// program's real ones, keeps answers between runs, or leaves work running
// behind it; and the honest patches, which must still be accepted. The
// games of the rules (outputs, builds, hidden flags, the pin, the verdict's
// protocol) are e2e/gaming/rules.
func TestOptimizerCannotGameItsRuns(t *testing.T) { testbed.RunGames(t, runGames()) }

func runGames() []testbed.Game {
	cases := []testbed.Game{
		{Name: "an honest 4x faster patch is still accepted", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("one walk is enough", a.Prog("#define REPS 4", testbed.OnceFaster))
			testbed.WantVerdict(t, e, ledger.VerdictAccepted)
			// Four times less work is not four times less time: each run's
			// exec and input generation cost about one walk here (baseline
			// 22.9 ms, candidate 9.9 ms), so the true ratio is about 2.4 and
			// the interval's low end fell to 1.99 on a two-core machine.
			if st := e.Bench.Stat(e.Bench.Metric); st.CILow < 1.6 || e.InputSeed == 0 || len(e.Bench.Outputs) != e.Bench.Pairs || len(e.Bench.Setups) != e.Bench.Pairs {
				t.Errorf("speedup %+v, seed %d", st, e.InputSeed)
			}
		}},
		{Name: "an honest patch counted in instructions is still accepted", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.JudgeTarget("ci", "one walk is enough, counted", a.Prog("#define REPS 4", testbed.OnceFaster))
			testbed.WantVerdict(t, e, ledger.VerdictAccepted)
			if e.Bench.Check == nil {
				t.Error("no cpu-time check")
			}
		}},
	}
	for _, c := range []struct{ where, dir string }{
		{"/tmp", `"/tmp"`}, {"HOME", `getenv("HOME")`}, {"/dev/shm", `"/dev/shm"`},
		{"the working directory", `"."`}, {"HONE_OUT", `getenv("HONE_OUT")`}, {"/var/tmp", `"/var/tmp"`},
	} {
		name, dir := "a cache in "+c.where, c.dir
		cases = append(cases, testbed.Game{Name: name, Run: func(t *testing.T, a *testbed.Arena) { a.JudgeRemembered(t, name, dir) }})
	}
	cases = append(cases,
		testbed.Game{Name: "a helper that outlives the run", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("leave a helper behind", a.Fast(
				"#include <string.h>", "#include <string.h>\n#include <unistd.h>",
				"\tunsigned long long r = 0;", "\tif (fork() == 0) { setsid(); if (fork() == 0) { sleep(100); } _exit(0); }\n\tunsigned long long r = 0;"))
			// The golden gate's run is the first to leave it behind; on a
			// loaded machine that gate once counted none left (cause not
			// yet found) and the bench gate's runs caught it instead.
			testbed.NotAccepted(t, e, ledger.VerdictRejectedGate)
			if g := e.Gates[len(e.Gates)-1]; (g.Name != "golden" && g.Name != "bench") || !strings.Contains(g.Message, "processes running after it exited") {
				t.Errorf("failed gate %s: %q; want golden or bench: a process left running", g.Name, g.Message)
			}
		}},
		testbed.Game{Name: "a child the kernel reaps does the work", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("a child does the work", a.Prog(
				"#include <string.h>", "#include <string.h>\n#include <sched.h>\n#include <signal.h>\n#include <unistd.h>",
				"\tunsigned long long r = 0;\n\tfor (int k = 0; k < REPS; k++)\n\t\tr = walk(steps);",
				"\tunsigned long long r = 0;\n\tint p[2];\n\tif (pipe(p) != 0) return 1;\n\tsignal(SIGCHLD, SIG_IGN);\n"+
					"\tpid_t child = fork();\n\tif (child == 0) {\n\t\tfor (int k = 0; k < REPS; k++)\n\t\t\tr = walk(steps);\n\t\tif (write(p[1], &r, sizeof r) != sizeof r) _exit(1);\n\t\t_exit(0);\n\t}\n"+
					"\tif (read(p[0], &r, sizeof r) != sizeof r) return 1;\n"+
					// Until the kernel has reaped it, so no process is left.
					"\twhile (kill(child, 0) == 0) sched_yield();"))
			testbed.NotAccepted(t, e, ledger.VerdictRejectedBench, ledger.VerdictNeedsHumanReview)
			if e.Environment.Cgroup && (e.Bench == nil || e.Bench.CandidateUnreapedSeconds <= 0 || e.Speedup > 1.5) {
				t.Errorf("the reaped child's CPU was not charged: %+v", e.Bench)
			}
		}},
		testbed.Game{Name: "skip the work once the build is three seconds old", Run: func(t *testing.T, a *testbed.Arena) {
			files := a.Skip("#include <time.h>", "({ struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts); ts.tv_sec * 1000000000ULL + ts.tv_nsec - BUILT > 3000000000ULL; })")
			files["Makefile"] = testbed.GamingMakefile("cc -O2 -g -DBUILT=$(shell date +%s%N)ULL -o $(OUT)/prog prog.c")
			// A test suite as slow as real ones are: the bench starts more
			// than three seconds after the build, while the golden gate, on
			// a busy machine too, runs within them.
			files["test.sh"] = "sleep 3.5\nexec \"$HONE_OUT/prog\" --selftest\n"
			e, _ := a.Judge("the bench comes later", files)
			testbed.GateFailed(t, e, "bench", "bench output differs from the baseline's")
		}},
	)
	for _, d := range []struct{ what, includes, cond string }{
		{"when stdout is a pipe", "#include <sys/stat.h>", "({ struct stat st; fstat(1, &st) == 0 && S_ISFIFO(st.st_mode); })"},
		{"when its parent is PID 1", "#include <unistd.h>", "getppid() == 1"},
		{"when PID 1 is hone's meter", "", `({ char b[64] = {0}; FILE *f = fopen("/proc/1/cmdline", "r"); f && fread(b, 1, 63, f) > 0 && strstr(b, "hone-jail-init"); })`},
		{"by HOME", "", `getenv("HOME") && strcmp(getenv("HOME"), "/home/hone") == 0`},
		{"by a meter's mount", "", `({ char b[1 << 16] = {0}; FILE *f = fopen("/proc/self/mountinfo", "r"); f && fread(b, 1, sizeof b - 1, f) > 0 && strstr(b, "/hone/meter"); })`},
		// A bench run at a raised priority (nice) would take the cores
		// ahead of the machine's other work, and tell the program so.
		{"when its priority is raised", "#include <sys/resource.h>", "getpriority(PRIO_PROCESS, 0) < 0"},
	} {
		cases = append(cases, testbed.Game{Name: "skip the work " + d.what, Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("the bench looks different "+d.what, a.WalkOnceWhen(d.includes, d.cond))
			// Where the jail hides the fact, the work is done and the
			// patch changes nothing; where it cannot (HOME is the jail's,
			// the parent its init, stdout a pipe), the faster patch looks
			// at how it runs, and that needs a person.
			if e.Verdict == ledger.VerdictNeedsHumanReview {
				testbed.Risky(t, e, "environment in ")
				return
			}
			testbed.NotAccepted(t, e, ledger.VerdictRejectedBench)
			if e.Speedup > 1.5 {
				t.Errorf("measured %.2fx", e.Speedup)
			}
		}})
	}
	cases = append(cases,
		testbed.Game{Name: "fast only under valgrind", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.JudgeTarget("ci", "cheaper when counted", a.Prog(
				"\tunsigned long long r = 0;", "\tunsigned long long r = 0;\n\tint reps = getenv(\"LD_PRELOAD\") && strstr(getenv(\"LD_PRELOAD\"), \"vgpreload\") ? 1 : REPS;",
				"k < REPS", "k < reps"))
			testbed.NotAccepted(t, e, ledger.VerdictNeedsHumanReview, ledger.VerdictRejectedBench)
			if e.Bench == nil || e.Bench.Check == nil {
				t.Errorf("no cpu-time check ran: %s", e.Detail)
			}
		}},
	)
	return cases
}
