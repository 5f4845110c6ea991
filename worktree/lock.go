package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
)

// sessionLock serializes enter and exit on one session across processes. It is
// a non-blocking flock on <sessions>/<session>.lock: the kernel drops it when
// its holder dies, so a lock left by a crashed or killed hone is recovered by
// the next caller without guessing from pids, and the file itself is never
// deleted (deleting a flocked file would let two processes lock two different
// files). The pid written into the file only names the holder in messages.
type sessionLock struct{ f *os.File }

func lockSession(repo *repo.Repo, session string) (*sessionLock, error) {
	dir := sessionsDir(repo)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", dir)
	}
	p := filepath.Join(dir, session+".lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open the session lock %s", p)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errs.Busyf("worktree session %q is busy: another hone process%s is entering or exiting it right now; nothing was changed; retry when it has finished", session, holder)
		}
		return nil, errs.Wrap(errs.Failure, err, "cannot lock %s", p)
	}
	// The holder line is informational; failing to write it must not fail the lock.
	if f.Truncate(0) == nil {
		fmt.Fprintf(f, "pid %d since %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	}
	return &sessionLock{f}, nil
}

func (l *sessionLock) unlock() {
	l.f.Truncate(0)
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
}

// readHolder returns " (pid N since T)" from a lock file, or "" when the
// holder has not written it yet.
func readHolder(f *os.File) string {
	b := make([]byte, 128)
	n, _ := f.ReadAt(b, 0)
	line := strings.TrimSpace(string(b[:n]))
	if !strings.HasPrefix(line, "pid ") {
		return ""
	}
	return " (" + line + ")"
}
