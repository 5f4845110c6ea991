package jail

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/tier"
)

// A run whose process has ended while something it left outside its
// process group still holds the report pipe (bwrap's child, orphaned by a
// cancel that killed bwrap mid-start, waits forever for its parent) ends
// with no report, not never: a cancelled verdict hung for good on it under
// load. The stand-in here is a shell that leaves a sleep, in a session of
// its own, holding fd 4, and exits.
func TestARunWhoseReportPipeOutlivesItEnds(t *testing.T) {
	tier.Jail(t)
	cmd := exec.Command("sh", "-c", "setsid sleep 29.713 </dev/null >/dev/null 2>&1 & exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	l := &launch{cmd: cmd, kill: func(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }}
	t.Cleanup(func() { _ = exec.Command("pkill", "-f", "^sleep 29.713$").Run() })
	start := time.Now()
	res, err := l.run(context.Background(), Spec{Command: "stand-in"}, &Result{})
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the run took %v: it waited for the pipe's last holder", took)
	}
	if err != nil || res == nil || !res.MeterFailed || !strings.Contains(res.MeterError, "report") {
		t.Fatalf("err %v, result %+v", err, res)
	}
}
