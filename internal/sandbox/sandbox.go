// Package sandbox runs one shell command the way hone runs every build, gate,
// bench and profile command: through `sh -c` in a given directory, with a
// scrubbed environment, resource limits, no network where the kernel allows a
// network namespace, and a process tree that is killed whole on timeout or
// cancellation. Result.Isolation says what isolation the command actually had.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/hone-perf/hone/internal/errs"
)

// Spec describes one command.
type Spec struct {
	Dir     string   // working directory
	Command string   // shell text, run with sh -c
	Env     []string // KEY=VALUE pairs added to the scrubbed base environment (Env)
	Stdin   io.Reader
	Timeout time.Duration // 0 means no timeout beyond ctx

	// Network is "deny" (the default when empty) or "allow".
	Network string
	// RequireIsolation makes Run fail with ErrNoIsolation instead of running
	// with less isolation than asked (no PID namespace, or no network
	// namespace when Network is "deny").
	RequireIsolation bool

	Limits Limits
	// OutputCap bounds how many bytes of stdout and of stderr are kept (each);
	// the rest is still hashed and counted. 0 means DefaultOutputCap.
	OutputCap int
	// Home is the HOME directory; empty means a fresh temporary directory
	// removed after the command.
	Home string
}

// Limits are rlimits applied inside the shell before the command runs, so
// every descendant inherits them. Zero fields take the defaults.
type Limits struct {
	CPU      time.Duration // RLIMIT_CPU of each process (default 1h)
	FileSize int64         // RLIMIT_FSIZE in bytes (default 4 GiB)
	// Data is RLIMIT_DATA in bytes (default 16 GiB). RLIMIT_AS is not used:
	// Go and some compilers reserve large address ranges they never touch,
	// and would fail under any address-space limit tight enough to matter.
	Data int64
}

// DefaultOutputCap is how much of each output stream a Result keeps by default.
const DefaultOutputCap = 1 << 20

// ErrNoIsolation is returned (wrapped, exit code Failure) when
// Spec.RequireIsolation is set and the kernel refuses the namespaces.
var ErrNoIsolation = errors.New("sandbox isolation unavailable")

// Result is what one command did.
type Result struct {
	ExitCode int  // -1 when killed by a signal
	Signaled bool // ended by a signal (including our kill on timeout)
	TimedOut bool // killed because Spec.Timeout elapsed
	Stdout   Output
	Stderr   Output
	// UserTime and SysTime come from wait4's rusage: the shell and every
	// descendant it waited for.
	UserTime, SysTime time.Duration
	Wall              time.Duration
	MaxRSS            int64 // bytes, largest single process
	// Isolation names what the command ran under: "pidns+netns",
	// "userns+pidns+netns", "pidns" (network allowed), "userns+pidns", or
	// "process-group" when no namespace could be created.
	Isolation     string
	NetworkDenied bool
}

// CPU is user plus system time.
func (r *Result) CPU() time.Duration { return r.UserTime + r.SysTime }

// Success reports a zero exit status.
func (r *Result) Success() bool { return r.ExitCode == 0 && !r.Signaled }

// Describe says in a few words how the command ended.
func (r *Result) Describe() string {
	switch {
	case r.TimedOut:
		return fmt.Sprintf("timed out after %s and was killed", r.Wall.Round(time.Millisecond))
	case r.Signaled:
		return "killed by a signal"
	default:
		return fmt.Sprintf("exit status %d", r.ExitCode)
	}
}

// Run executes s. A non-zero exit status is not an error; err is set only when
// the command could not be run (or isolation was required and unavailable),
// or when ctx was cancelled, in which case the whole tree has been killed.
func Run(ctx context.Context, s Spec) (*Result, error) {
	if s.Network == "" {
		s.Network = "deny"
	}
	home := s.Home
	if home == "" {
		d, err := os.MkdirTemp("", "hone-home-")
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "sandbox: cannot create a HOME directory")
		}
		defer os.RemoveAll(d)
		home = d
	}
	level := chooseLevel(s.Network == "deny")
	if s.RequireIsolation && !level.full(s.Network == "deny") {
		return nil, errs.Wrap(errs.Failure, ErrNoIsolation, "sandbox: isolation is required ([sandbox] require_isolation) but the kernel allows only %q here", level.name)
	}
	outCap := s.OutputCap
	if outCap <= 0 {
		outCap = DefaultOutputCap
	}
	res := &Result{Isolation: level.name, NetworkDenied: level.net, Stdout: newOutput(outCap), Stderr: newOutput(outCap)}

	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if s.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, s.Timeout)
	}
	defer cancel()

	cmd := exec.Command("/bin/sh", "-c", limitPrefix(s.Limits)+s.Command)
	cmd.Dir = s.Dir
	cmd.Env = append(BaseEnv(home), s.Env...)
	cmd.Stdin = s.Stdin
	cmd.Stdout, cmd.Stderr = &res.Stdout, &res.Stderr
	cmd.SysProcAttr = level.attr()
	// Pipes held open by an escaped descendant must not hang Wait forever.
	cmd.WaitDelay = 2 * time.Second

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "sandbox: cannot start %q", s.Command)
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	go func() {
		select {
		case <-runCtx.Done():
			killTree(pid)
		case <-done:
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	res.Wall = time.Since(start)
	// Whatever the shell left running in its group goes with it. In a PID
	// namespace the kernel has already killed the rest when the shell died.
	// The shell is reaped, so only its group is signalled: a live member
	// keeps the group id from being reused.
	if !level.pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}

	st := cmd.ProcessState
	if st == nil {
		return nil, errs.Wrap(errs.Failure, waitErr, "sandbox: %q did not run", s.Command)
	}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		res.UserTime = time.Duration(ru.Utime.Nano())
		res.SysTime = time.Duration(ru.Stime.Nano())
		res.MaxRSS = ru.Maxrss * 1024
	}
	ws := st.Sys().(syscall.WaitStatus)
	res.ExitCode = ws.ExitStatus()
	res.Signaled = ws.Signaled()
	if ctx.Err() != nil {
		return res, errs.Wrap(errs.Failure, ctx.Err(), "sandbox: %q cancelled", s.Command)
	}
	res.TimedOut = runCtx.Err() == context.DeadlineExceeded
	return res, nil
}

func killTree(pid int) {
	// The negative pid reaches the process group (Setpgid), the positive one
	// the namespace's init, whose death makes the kernel kill the namespace.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// Quote makes s one word for the sh -c that runs every command, whatever it
// contains.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func limitPrefix(l Limits) string {
	if l.CPU <= 0 {
		l.CPU = time.Hour
	}
	if l.FileSize <= 0 {
		l.FileSize = 4 << 30
	}
	if l.Data <= 0 {
		l.Data = 16 << 30
	}
	// dash's ulimit takes one resource per call; -f counts 512-byte blocks
	// and -d kilobytes. A limit above hone's own hard limit could not be set,
	// so it is lowered to that; a failure aborts before the command runs.
	return fmt.Sprintf("ulimit -t %d && ulimit -f %d && ulimit -d %d || exit 125\n",
		capped(syscall.RLIMIT_CPU, int64((l.CPU+time.Second-1)/time.Second), 1),
		capped(syscall.RLIMIT_FSIZE, l.FileSize, 512),
		capped(syscall.RLIMIT_DATA, l.Data, 1024))
}

// capped converts v to units of unit, no higher than the current hard limit.
func capped(resource int, v, unit int64) int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(resource, &rl); err == nil && rl.Max != ^uint64(0) && uint64(v) > rl.Max {
		v = int64(rl.Max)
	}
	return (v + unit - 1) / unit
}
