package jail

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/tier"
)

// leftoverC is a candidate that leaves a process running: "daemon" is the
// classic double fork (fork, setsid, fork, and both parents exit at once),
// whose middle process forks its daemon while the meter may be listing
// /proc; "blank" leaves a child that has zeroed its own command line, as a
// process may to hide what it runs; "thread" leaves a child whose main
// thread has exited, a zombie in /proc/PID/stat, while another thread runs
// on. The command exits only once its child is as described.
const leftoverC = `#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int p[2];

static void *run(void *arg) {
	char st[512];
	for (;;) {
		FILE *f = fopen("/proc/self/stat", "r");
		size_t n = f ? fread(st, 1, sizeof st - 1, f) : 0;
		if (f) fclose(f);
		st[n] = 0;
		char *r = strrchr(st, ')');
		if (r && r[1] == ' ' && r[2] == 'Z') break;
	}
	write(p[1], "x", 1);
	for (;;) pause();
	return arg;
}

int main(int argc, char **argv) {
	if (argc < 2) return 2;
	if (strcmp(argv[1], "daemon") == 0) {
		if (fork() != 0) return 0;
		setsid();
		if (fork() != 0) return 0;
		for (;;) pause();
	}
	if (pipe(p) != 0) return 1;
	if (fork() == 0) {
		if (strcmp(argv[1], "thread") == 0) {
			pthread_t t;
			pthread_create(&t, 0, run, 0);
			pthread_exit(0);
		}
		char *end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
		memset(argv[0], 0, end - argv[0]);
		write(p[1], "x", 1);
		for (;;) pause();
	}
	char c;
	return read(p[0], &c, 1) == 1 ? 0 : 1;
}
`

// isolations are the ways a run may be isolated, as far as finding its
// leftovers goes: the bwrap jail, weak isolation with a PID namespace (the
// meter is PID 1 in both), and weak isolation without one.
var isolations = []string{"full", "weak", "process-group"}

// isolate returns the Spec.Isolation for one of isolations, making weak
// isolation go without a PID namespace for the test when asked to.
func isolate(t *testing.T, iso string) string {
	if iso != "process-group" {
		return iso
	}
	levelMu.Lock()
	defer levelMu.Unlock()
	old := levels
	levels = map[bool]level{false: {name: iso}, true: {name: iso}}
	t.Cleanup(func() {
		levelMu.Lock()
		levels = old
		levelMu.Unlock()
	})
	return "weak"
}

// runLeftover runs the leftover program built in dir in mode, under the
// given isolation. The minute's timeout guards against a hang; it is no
// timing assertion.
func runLeftover(t *testing.T, dir, mode, isolation string) *Result {
	t.Helper()
	return run(t, Spec{Command: "./leftover " + mode, Dir: "/prog", Isolation: isolation,
		Mounts: []Mount{{Host: dir, Jail: "/prog", Mode: ReadOnly}}, Timeout: time.Minute})
}

func buildLeftover(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	writeFile(t, dir, "leftover.c", leftoverC, 0o644)
	cmd := exec.Command("cc", "-O2", "-pthread", "-o", filepath.Join(dir, "leftover"), filepath.Join(dir, "leftover.c"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return dir
}

// A daemon forked by a process that exits at once is still found, every
// time: the middle process may fork it and exit while the meter lists
// /proc, and a single listing then sees neither (it did in 1 to 50 runs of
// 200). The meter's scan is complete by construction, so one miss fails.
func TestDoubleForkedDaemonIsAlwaysFound(t *testing.T) {
	tier.Jail(t)
	dir := buildLeftover(t)
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			const runs = 200
			missed, isolation := 0, isolate(t, iso)
			for i := 0; i < runs; i++ {
				res := runLeftover(t, dir, "daemon", isolation)
				if !res.Success() || iso == "process-group" && res.Isolation != iso {
					t.Fatalf("%s under %s: %s", res.Describe(), res.Isolation, res.Stderr.Tail(1000))
				}
				// The middle process may be counted too (stopped before it
				// could exit). Either way one process listed bears the
				// daemon's command line: the daemon, or the middle process
				// if the listings caught it inside the fork (see leftovers).
				named := false
				for _, l := range res.Lingering {
					named = named || strings.Contains(l.Command, "leftover daemon")
				}
				named = named && len(res.Lingering) == res.Leftover
				if !named {
					missed++
					t.Errorf("run %d: leftover %d, lingering %+v; want the daemon, named", i, res.Leftover, res.Lingering)
				}
			}
			if missed > 0 {
				t.Errorf("%d of %d runs missed the daemon", missed, runs)
			}
		})
	}
}

// A leftover that blanked its command line is still named, by the name
// the kernel keeps for it (comm), bracketed as ps shows it.
func TestLeftoverWithoutCommandLineIsNamed(t *testing.T) {
	oneLeftoverNamed(t, "blank", "[leftover]")
}

// A process whose main thread has exited shows as a zombie in its stat,
// but a thread of it runs on: it is a leftover, named by its command line
// as that thread reads it.
func TestLeftoverWithAnExitedMainThreadIsFound(t *testing.T) {
	oneLeftoverNamed(t, "thread", "./leftover thread")
}

// oneLeftoverNamed runs the leftover program in mode under every isolation
// and wants exactly one process left behind, named want.
func oneLeftoverNamed(t *testing.T, mode, want string) {
	tier.Jail(t)
	dir := buildLeftover(t)
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			res := runLeftover(t, dir, mode, isolate(t, iso))
			if !res.Success() || res.Leftover != 1 || len(res.Lingering) != 1 {
				t.Fatalf("%s, leftover %d, lingering %+v; want one", res.Describe(), res.Leftover, res.Lingering)
			}
			if got := res.Lingering[0].Command; got != want {
				t.Errorf("named %q; want %q", got, want)
			}
		})
	}
}
