package guard

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/reexec"
	"github.com/hone-perf/hone/ledger"
)

// A server's checks judge a push against every ledger ref it holds (the
// branch and every inbox), and git moves the pushed refs only after the
// hook has exited. Two pushes checked side by side would each be judged
// without the other: two inboxes adding one path with different bytes
// would both be taken, though either alone is refused once the other is
// in. Git's own ref locks cover one ref, not a rule across refs, so every
// push is checked under one lock of the server, held from before its
// checks until its git receive-pack has ended: by then the refs it moves
// have moved (or the push failed), and the next push is judged against
// them.
//
// The hook cannot hold the lock that long itself, since receive-pack moves
// the refs after the hook exits. It hands the lock (an flock, which
// belongs to the open file, not the process) to a holder process that
// lives until receive-pack ends, watched through a pidfd the hook opens
// while receive-pack is certainly alive (it waits for its hook). When the
// holder ends, or dies, the kernel drops the lock; nothing guesses from
// pids.

// receiveLockName is the lock's file in the server's git directory, which
// every account that may push shares: its permissions follow the
// directory's (a repository shared with a group, or with everyone, lets
// every pushing account open it).
const receiveLockName = "hone-receive.lock"

// receiveHolderName is the holder's program name (see internal/reexec).
const receiveHolderName = "hone-receive-holder"

// maxReceiveHold bounds how long a holder keeps the lock: a receive-pack
// that outlives it (a client that stalls the report) no longer keeps
// every other push out.
const maxReceiveHold = 10 * time.Minute

// receiveWait bounds how long a push waits for the pushes ahead of it
// before it is refused as busy.
const receiveWait = 5 * time.Minute

// holderPidfdFD is the holder's inherited pidfd of receive-pack; the file
// before it (fd 3) is the lock, held and never read.
const holderPidfdFD = 4

func init() {
	reexec.Register(receiveHolderName, holdReceiveLock)
}

// lockReceive takes the server's receive lock for one push, waiting at
// most receiveWait for the pushes ahead of it (each holds it for the
// length of its own push). Under git receive-pack, the lock is handed to
// a holder that keeps it until receive-pack ends; release ends this
// process's part.
func (p *Policy) lockReceive(ctx context.Context) (release func(), err error) {
	f, err := openReceiveLock(p.repo.CommonDir)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(receiveWait)
	for pause, told := time.Millisecond, false; ; pause = min(2*pause, 50*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, errs.Wrap(errs.Failure, err, "cannot lock %s", f.Name())
		}
		if !told {
			receivePause("waiting")
			told = true
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, errs.Busyf("%s for %s; push again", ledger.ServerBusy, receiveWait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, errs.Wrap(errs.Failure, ctx.Err(), "interrupted while waiting for the server's other pushes")
		case <-time.After(pause):
		}
	}
	if err := holdUntilReceiveEnds(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// openReceiveLock opens (creating) the receive lock of the git directory
// dir, readable and writable by the classes of accounts that may write
// dir, and never through a symbolic link.
func openReceiveLock(dir string) (*os.File, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the git directory %s", dir)
	}
	perm := os.FileMode(0o600)
	if st.Mode().Perm()&0o020 != 0 {
		perm |= 0o060
	}
	if st.Mode().Perm()&0o002 != 0 {
		perm |= 0o006
	}
	path := filepath.Join(dir, receiveLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, perm)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open the server's receive lock %s", path)
	}
	// The umask narrows what OpenFile creates; a lock file this account
	// owns is given the directory's sharing again.
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm() != perm {
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok && int(sys.Uid) == os.Geteuid() {
			f.Chmod(perm)
		}
	}
	return f, nil
}

// holdUntilReceiveEnds starts the holder of the locked file f for the git
// receive-pack this hook runs under. Outside one (a hook run by hand, a
// test calling the checks), the lock lasts as long as this process holds
// it.
func holdUntilReceiveEnds(f *os.File) error {
	pid := receivePack(os.Getppid())
	if pid == 0 || !reexec.Initialized() {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot watch git receive-pack (pid %d) to hold the receive lock until it ends (pidfd_open needs Linux 5.3 or later)", pid)
	}
	pidfd := os.NewFile(uintptr(fd), "receive-pack")
	defer pidfd.Close()
	exe, err := os.Executable()
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot find hone's executable to hold the receive lock")
	}
	// No stdin, stdout or stderr: receive-pack reads its hook's output
	// until every writer has closed it, and would wait for the holder.
	cmd := &exec.Cmd{Path: exe, Args: []string{receiveHolderName}, ExtraFiles: []*os.File{f, pidfd},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot start the holder of the receive lock")
	}
	return cmd.Process.Release()
}

// receivePack is the nearest git receive-pack among pid and its
// ancestors, 0 when there is none.
func receivePack(pid int) int {
	for ; pid > 1; pid = parentOf(pid) {
		argv, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return 0
		}
		args := strings.Split(string(argv), "\x00")
		switch base := filepath.Base(args[0]); {
		case base == "git-receive-pack", base == "git" && len(args) > 1 && args[1] == "receive-pack":
			return pid
		}
	}
	return 0
}

// parentOf is pid's parent, 0 when it cannot be read.
func parentOf(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name in parentheses may hold spaces and parentheses;
	// the fields after its last ")" are the state, then the parent.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// holdReceiveLock is the holder's whole life: it keeps the inherited lock
// until receive-pack's pidfd says it ended, or maxReceiveHold passed.
func holdReceiveLock() int {
	deadline := time.Now().Add(maxReceiveHold)
	fds := []unix.PollFd{{Fd: holderPidfdFD, Events: unix.POLLIN}}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return 0
		}
		_, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if !errors.Is(err, unix.EINTR) {
			return 0
		}
	}
}
