package jail

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// A run that hides work in short-lived helpers is seen by how many tasks it
// started, whoever reaped them, and whether they were threads or processes.
func TestRunCountsEveryTaskItStarts(t *testing.T) {
	one := run(t, Spec{Command: "/bin/true"})
	four := run(t, Spec{Command: "/bin/sh -c '/bin/true; /bin/true; /bin/true; exit 0'"})
	if one.Tasks != 1 || four.Tasks != 4 {
		t.Errorf("tasks: /bin/true %d (want 1), a shell running three %d (want 4)", one.Tasks, four.Tasks)
	}
	if one.Processes != 1 || one.Threads != 0 || four.Processes != 4 || four.Threads != 0 {
		t.Errorf("/bin/true: %d processes, %d threads (want 1, 0); the shell: %d, %d (want 4, 0)", one.Processes, one.Threads, four.Processes, four.Threads)
	}
}

// tasksC starts three threads (pthread_create, which tries clone3 first)
// and one process through posix_spawn (clone3, then clone with CLONE_VM
// and CLONE_VFORK), each of which libc starts through the call the meter's
// filter leaves it.
const tasksC = `#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
extern char **environ;
static void *idle(void *p) { return p; }
int main(void) {
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], 0, idle, 0) != 0)
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], 0);
	pid_t pid;
	char *argv[] = {"true", 0};
	if (posix_spawn(&pid, "/bin/true", 0, 0, argv, environ) != 0)
		return 2;
	int st;
	return waitpid(pid, &st, 0) == pid && st == 0 ? 0 : 3;
}
`

func TestRunTellsThreadsFromProcesses(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	writeFile(t, dir, "tasks.c", tasksC, 0o644)
	if out, err := exec.Command("cc", "-O2", "-pthread", "-o", filepath.Join(dir, "tasks"), filepath.Join(dir, "tasks.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	res := run(t, Spec{Command: "/t/tasks", Mounts: []Mount{{Host: dir, Jail: "/t", Mode: ReadOnly}}})
	if !res.Success() {
		t.Fatalf("%s\n%s", res.Describe(), res.Stderr.Tail(2000))
	}
	if res.Processes != 2 || res.Threads != 3 || res.Tasks != 5 {
		t.Errorf("%d processes, %d threads, %d tasks; want 2, 3, 5", res.Processes, res.Threads, res.Tasks)
	}
	off := run(t, Spec{Command: "/t/tasks", Seccomp: Seccomp{Off: true}, Mounts: []Mount{{Host: dir, Jail: "/t", Mode: ReadOnly}}})
	if off.Processes != 0 || off.Threads != 0 || off.Tasks != 5 {
		t.Errorf("without the filter: %d processes, %d threads, %d tasks; want the split unknown (0, 0) and 5 tasks", off.Processes, off.Threads, off.Tasks)
	}
}

// A command that took the process-creating calls for a listener of its
// own could answer them itself, unseen by the meter (the kernel allows one
// listener per chain of filters); one that used clone3 could change its
// flags after the filter read them. Both are refused, and its forks are
// still counted.
func TestCandidateCannotHideItsForksFromTheMeter(t *testing.T) {
	res := run(t, Spec{Command: attackPath + " hide-forks", Mounts: []Mount{attackMount(t)}})
	out := string(res.Stdout.Bytes())
	for _, want := range []string{"listener=EBUSY", "clone3=ENOSYS", "forked=2"} {
		if !containsLine(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if res.Processes != 3 {
		t.Errorf("%d processes counted, want 3 (the attack and its two forks)", res.Processes)
	}
}

// signalledC forks 200 children while a thread of its own signals it
// without pause. A fork that finds a signal pending after the meter let it
// continue is made again by the kernel (ERESTARTNOINTR), and the meter
// hears of it twice: processes may be counted over, never under, and the
// total stays exact.
const signalledC = `#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static pthread_t main_thread;
static volatile int done;
static void on_signal(int s) { (void)s; }
static void *pester(void *p) {
	while (!done)
		pthread_kill(main_thread, SIGUSR1);
	return p;
}
int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, 0);
	main_thread = pthread_self();
	pthread_t t;
	if (pthread_create(&t, 0, pester, 0) != 0)
		return 1;
	for (int i = 0; i < 200; i++) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		while (waitpid(p, 0, 0) < 0)
			;
	}
	done = 1;
	pthread_join(t, 0);
	return 0;
}
`

func TestForksInterruptedBySignalsAreNeverCountedUnder(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	writeFile(t, dir, "signalled.c", signalledC, 0o644)
	if out, err := exec.Command("cc", "-O2", "-pthread", "-o", filepath.Join(dir, "signalled"), filepath.Join(dir, "signalled.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	res := run(t, Spec{Command: "/t/signalled", Mounts: []Mount{{Host: dir, Jail: "/t", Mode: ReadOnly}}})
	if !res.Success() {
		t.Fatalf("%s\n%s", res.Describe(), res.Stderr.Tail(2000))
	}
	if res.Tasks != 202 || res.Processes < 201 || res.Threads > 1 {
		t.Errorf("%d tasks, %d processes, %d threads; want 202 tasks, at least 201 processes and at most 1 thread", res.Tasks, res.Processes, res.Threads)
	}
}
