package jail

import (
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// A run that hides work in short-lived helpers is seen by how many tasks it
// started, whoever reaped them.
func TestRunCountsEveryTaskItStarts(t *testing.T) {
	tier.Jail(t)
	one := run(t, Spec{Command: "/bin/true"})
	four := run(t, Spec{Command: "/bin/sh -c '/bin/true; /bin/true; /bin/true; exit 0'"})
	if one.Tasks != 1 || four.Tasks != 4 {
		t.Errorf("tasks: /bin/true %d (want 1), a shell running three %d (want 4)", one.Tasks, four.Tasks)
	}
}

// The meter must never change what a fork returns. dash catches SIGCHLD
// without SA_RESTART, so a fork that waits on anything the meter does (a
// listener filter that counted processes did) fails with EINTR whenever a
// child exits meanwhile, and the shell prints "Cannot fork": honest
// scripts broke. Children exit here during every fork the shell makes.
func TestShellForksNeverFailWhileChildrenExit(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: `i=0; while [ $i -lt 200 ]; do (true &); x=$(echo hi | cat); i=$((i+1)); done; echo done`})
	if got := string(res.Stdout.Bytes()); res.ExitCode != 0 || got != "done\n" || len(res.Stderr.Tail(200)) != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, done, nothing", res.ExitCode, got, res.Stderr.Tail(200))
	}
	if res.Tasks < 800 {
		t.Errorf("%d tasks counted, want at least 800 (four forks an iteration)", res.Tasks)
	}
}
