package jail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/reexec"
)

// Run executes s in the jail (or, with Isolation "weak", under the meter
// alone). A non-zero exit status is not an error, nor is a run the meter
// could not measure (Result.MeterFailed). err is set when s is invalid, when
// the full jail is not available here (the message says what to install),
// or when ctx was cancelled, in which case the whole jail has been killed.
func Run(ctx context.Context, s Spec) (*Result, error) {
	if unitTier() {
		return nil, errs.Failuref("the unit tier (go test -short) starts no jail: mark the test with tier.Jail(t), which runs it in the default tier (bash scripts/test.sh)")
	}
	if !reexec.Initialized() {
		return nil, errs.Failuref("the jail's meter is this executable re-run, and main (or TestMain) did not call reexec.Init first; call it there")
	}
	s, err := s.normalize()
	if err != nil {
		return nil, err
	}
	if os.Getenv("HONE_SECCOMP") == "off" || s.Isolation == "weak" {
		s.Seccomp.Off = true
	}
	if s.Tool != "" {
		s.Command = s.Tool + " /bin/sh -c " + Quote(s.Command)
	}
	var res *Result
	if s.Isolation == "weak" {
		res, err = runWeak(ctx, s)
	} else if err = Check(s.Network); err == nil {
		res, err = runFull(ctx, s)
	}
	if res != nil {
		res.UserCreated = userCreated.Swap(false)
	}
	return res, err
}

// backstop is how long hone waits past Spec.Timeout before it kills the jail
// itself. The meter enforces the timeout and still reports; this only
// covers a meter that cannot, and the copies it makes before the command
// starts.
const backstop = 30 * time.Second

// newPlan decides how the command runs, from the environment it will run
// with: exec'd directly when the shell would only split words, else under
// /bin/sh -c.
func newPlan(s Spec, env []string, dir string) (p plan, shell bool) {
	p = plan{Env: env, Dir: dir, Rlimits: s.Limits.rlimits(), TimeoutNS: int64(s.Timeout), OneCPU: s.OneCPU}
	if argv, ok := plainWords(s.Command, lookupIn(env)); ok {
		p.Argv, p.Lookup = argv, !strings.Contains(argv[0], "/")
		return p, false
	}
	p.Argv = []string{"/bin/sh", "-c", s.Command}
	return p, true
}

// launch is one started meter: bwrap (or the root stager that becomes bwrap)
// with the meter inside, or the weak meter itself.
type launch struct {
	cmd  *exec.Cmd
	plan plan
	// files are passed after the plan and report pipes, in order (fd 5
	// onwards), and closed in hone once the process has started.
	files []*os.File
	kill  func(pid int)
	// cgroup, when there is one, is the cgroup the process is cloned into.
	cgroup *cgroup
}

// reportWait is how long a run that has ended may take to deliver the
// meter's report, which it writes before it exits: as long as Wait lets
// stdout and stderr drain.
const reportWait = 2 * time.Second

// firstFD is the child's fd number of launch.files[0].
const firstFD = reportFD + 1

// run starts the process, hands the meter its plan, waits, and fills res
// from the meter's report. It returns res, unless nothing could be started.
func (l *launch) run(ctx context.Context, s Spec, res *Result) (*Result, error) {
	defer closeFiles(l.files)
	planR, planW, err := os.Pipe()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "jail: cannot create a pipe")
	}
	defer planW.Close()
	repR, repW, err := os.Pipe()
	if err != nil {
		planR.Close()
		return nil, errs.Wrap(errs.Failure, err, "jail: cannot create a pipe")
	}
	defer repR.Close()
	l.cmd.ExtraFiles = append([]*os.File{planR, repW}, l.files...)
	if s.Stdin != nil {
		// Always through a pipe: a host file handed over as fd 0 could be
		// reopened through /proc/self/fd/0 with the jail user's rights.
		l.cmd.Stdin = struct{ io.Reader }{s.Stdin}
	}
	res.Stdout, res.Stderr = newOutput(s.OutputCap), newOutput(s.OutputCap)
	l.cmd.Stdout, l.cmd.Stderr = &res.Stdout, &res.Stderr
	if l.cmd.Env == nil {
		l.cmd.Env = []string{}
	}
	// Pipes held open by anything that escaped must not hang Wait forever.
	l.cmd.WaitDelay = reportWait

	if l.cgroup != nil {
		l.cmd.SysProcAttr.UseCgroupFD, l.cmd.SysProcAttr.CgroupFD = true, int(l.cgroup.fd.Fd())
	}
	start := time.Now()
	err = l.cmd.Start()
	planR.Close()
	repW.Close()
	closeFiles(l.files)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "jail: cannot start the jail for %q", short(s.Command))
	}
	go func() {
		_ = json.NewEncoder(planW).Encode(l.plan)
		planW.Close()
	}()
	reported := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(repR, 1<<16))
		reported <- b
	}()
	var killedLate atomic.Bool
	done := make(chan struct{})
	go func() {
		var late <-chan time.Time
		if s.Timeout > 0 {
			t := time.NewTimer(s.Timeout + backstop)
			defer t.Stop()
			late = t.C
		}
		select {
		case <-ctx.Done():
		case <-late:
			killedLate.Store(true)
		case <-done:
			return
		}
		l.kill(l.cmd.Process.Pid)
	}()
	waitErr := l.cmd.Wait()
	close(done)
	res.JailWall = time.Since(start)
	var raw []byte
	select {
	case raw = <-reported:
	case <-time.After(reportWait):
		// Something outside the process group still holds the report
		// pipe: bwrap's child, orphaned when a cancel killed bwrap before
		// it handed the run to the meter, waits forever for a parent that
		// is gone (seen once under load: a verdict cancelled at that
		// moment hung for good). The run is over either way, and the
		// cgroup's removal kills what is left in it.
		repR.Close()
		raw = <-reported
	}

	rep, perr := parseReport(raw)
	switch {
	case perr != nil:
		res.MeterFailed, res.MeterError = true, noReport(perr, waitErr, &res.Stderr)
		res.ExitCode, res.Signaled = -1, true
	case rep.Error != "":
		res.MeterFailed, res.MeterError = true, rep.Error
		res.ExitCode = -1
	default:
		res.ExitCode, res.Signaled, res.TimedOut = rep.ExitCode, rep.Signaled, rep.TimedOut
		res.Wall, res.UserTime, res.SysTime = time.Duration(rep.WallNS), time.Duration(rep.UserNS), time.Duration(rep.SysNS)
		res.MaxRSS, res.Leftover, res.Tasks = rep.MaxRSSKB*1024, rep.Leftover, rep.Tasks
		res.Lingering = rep.Lingering
		res.Cgroup, res.Unreaped = rep.Cgroup, time.Duration(rep.UnreapedUserNS+rep.UnreapedSysNS)
		res.UserTime += time.Duration(rep.UnreapedUserNS)
		res.SysTime += time.Duration(rep.UnreapedSysNS)
	}
	res.TimedOut = res.TimedOut || killedLate.Load()
	if ctx.Err() != nil {
		return res, errs.Wrap(errs.Failure, ctx.Err(), "jail: %q cancelled", short(s.Command))
	}
	return res, nil
}

// parseReport accepts exactly one report and nothing after it.
func parseReport(raw []byte) (report, error) {
	var r report
	if len(raw) == 0 {
		return r, errors.New("no report")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("malformed report: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return r, errors.New("malformed report: data after the report")
	}
	return r, nil
}

// noReport explains a run without a report. bwrap's or the stager's own
// complaint, when there is one, is the last line of stderr.
func noReport(perr, waitErr error, stderr *Output) string {
	msg := "the jail ended with " + perr.Error()
	if waitErr != nil {
		msg += " (" + waitErr.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(stderr.Tail(512)), "\n"), "\n")
	last := lines[len(lines)-1]
	if (strings.HasPrefix(last, "bwrap: ") || strings.HasPrefix(last, stagerName+": ")) && len(last) < 300 {
		msg += ": " + last
	}
	return msg
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// unitTier reports whether this process is a test binary run with -short:
// the unit tier, which is hermetic. Only test binaries define test.short,
// so a release hone never refuses here. This is the one backstop; tests
// skip before they get here through tier.Jail.
func unitTier() bool {
	f := flag.Lookup("test.short")
	return f != nil && f.Value.String() == "true"
}
