// Package lock is hone's one inter-process lock: an flock on a file in
// hone's state directory. Waiters poll for locks held for milliseconds and
// queue for locks held for minutes (AcquireLong). The kernel drops an flock
// when its holder dies, so a lock left by a crashed or killed hone is free at
// once and nothing guesses from pids. The file itself is never deleted
// (deleting a locked file would let two processes lock two different files);
// the holder writes who it is into it, only to name it in messages.
package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
)

// DefaultWait bounds the wait of a caller whose ctx has no deadline, so no
// hone command can block forever behind another.
const DefaultWait = 30 * time.Second

// maxPoll is the longest pause between two tries: short, because holders
// (a ref update, a worktree add) keep hone's locks for milliseconds.
const maxPoll = 20 * time.Millisecond

// Lock is a held lock. Release it when done; dying releases it too.
type Lock struct {
	f *os.File
	// path and since, for a long lock: its turn is recorded on release
	// (see recordTurn).
	path  string
	since time.Time
}

// holder is what the process holding a lock writes into its file.
type holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Purpose string    `json:"purpose"`
	Since   time.Time `json:"since"`
}

// Acquire takes the lock on path (created with its directory if missing) for
// purpose, a verb phrase saying what the caller is about to do ("update
// refs"), used in messages. It waits until the lock is free or ctx is done,
// trying at least once: a ctx whose deadline has already passed fails at
// once when the lock is held. When ctx's deadline passes it returns a Busy
// error naming the holder; when ctx is cancelled, ctx's error wrapped as a
// Failure. A ctx without a deadline waits at most DefaultWait.
func Acquire(ctx context.Context, path, purpose string) (*Lock, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultWait)
		defer cancel()
	}
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	return acquire(ctx, f, purpose, maxPoll, nil, nil)
}

// longPoll is the pause between two looks of a waiter that is not first
// in a long lock's queue: a waiter wakes a few times a second, not fifty,
// beside the measurement it waits for. Only the first in line tries the
// lock, as often as Acquire does.
const longPoll = 250 * time.Millisecond

// Waiting is where a caller of AcquireLong stands while it waits.
type Waiting struct {
	// Holder names who holds the lock, from its record: "hone pid 123
	// (`hone verdict 3f2a`) since 21:40:03".
	Holder string
	// Ahead counts the live waiters queued before this one.
	Ahead int
	// Expected is when this waiter's turn is likely to come, from the
	// median of the lock's recent turns (Turn); zero when no turn was
	// ever recorded. It is worked out when Holder or Ahead changes.
	Expected time.Time
	Turn     time.Duration
}

// AcquireLong takes a lock that holders keep for minutes (a machine's turn
// to measure), in the order its callers asked for it (see queue). It calls
// waiting, when not nil, as soon as the lock is not free, and again
// whenever the holder or the number of waiters ahead changes, and waits
// until ctx is done, however long that is; it is otherwise Acquire.
func AcquireLong(ctx context.Context, path, purpose string, waiting func(Waiting)) (*Lock, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	q, err := joinQueue(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	defer q.leave()
	l, err := acquire(ctx, f, purpose, maxPoll, q, waiting)
	if err != nil {
		return nil, err
	}
	l.path, l.since = path, time.Now()
	return l, nil
}

// acquire waits for the lock on the open lock file f, trying it with
// pauses growing to maxPoll; with a queue, only while this waiter is first
// in it.
func acquire(ctx context.Context, f *os.File, purpose string, maxPoll time.Duration, q *queue, waiting func(Waiting)) (*Lock, error) {
	var told *Waiting
	for wait, first, ahead := time.Millisecond, q == nil, 0; ; {
		if !first {
			var err error
			if ahead, err = q.ahead(); err != nil {
				f.Close()
				return nil, err
			}
			first = ahead == 0
		}
		pause := longPoll
		if first {
			err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
			if err == nil {
				l := &Lock{f: f}
				l.sign(purpose)
				return l, nil
			}
			if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
				f.Close()
				return nil, errs.Wrap(errs.Failure, err, "cannot lock %s", f.Name())
			}
			pause, wait = wait, min(2*wait, maxPoll)
		}
		if waiting != nil {
			// Read only for a caller who is told: Acquire's short waits,
			// tens of tries a second, have no one to tell.
			h := holderOf(f)
			if now := (Waiting{Holder: h.describe(purpose), Ahead: ahead}); told == nil || told.Holder != now.Holder || told.Ahead != now.Ahead {
				now.Turn = medianTurn(f.Name())
				now.Expected = expectedTurn(now.Turn, h.Since, ahead, time.Now())
				waiting(now)
				told = &now
			}
		}
		timer := time.NewTimer(pause/2 + rand.N(pause/2+1))
		select {
		case <-ctx.Done():
			timer.Stop()
			who := holderOf(f).describe(purpose)
			f.Close()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, errs.Busyf("cannot %s: held by %s; retry when it has finished", purpose, who)
			}
			return nil, errs.Wrap(errs.Failure, ctx.Err(), "cannot %s: interrupted while waiting for %s", purpose, who)
		case <-timer.C:
		}
	}
}

// open opens the lock file on path for this account alone. Any account
// that can open a file can flock it, read-only as well, so a lock file
// others may read lets any of them hold hone's turn for as long as it
// likes; and a symbolic link in its place would have hone truncate and
// write whatever the link names, as root on a runner. A file this account
// made open to others (as hone did before) is closed to them again; one
// that another account made is refused.
func open(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", filepath.Dir(path))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, errs.New(errs.Failure, "the lock %s is a symbolic link; remove it, hone makes its own", path)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open the lock %s", path)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, errs.Wrap(errs.Failure, err, "cannot stat the lock %s", path)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = errs.New(errs.Failure, "the lock %s is not a regular file; remove it, hone makes its own", path)
	case st.Mode&0o007 == 0:
		return f, nil
	case int(st.Uid) != os.Geteuid():
		err = errs.New(errs.Failure, "the lock %s belongs to uid %d and every account may open it, so any of them could hold it; remove it, hone makes its own", path, st.Uid)
	default:
		if err = f.Chmod(0o600); err == nil {
			return f, nil
		}
		err = errs.Wrap(errs.Failure, err, "cannot close the lock %s to other accounts", path)
	}
	f.Close()
	return nil, err
}

// sign writes the holder record. It only names the holder in other
// processes' messages, so failing to write it must not fail the lock.
func (l *Lock) sign(purpose string) {
	b, _ := json.Marshal(holder{PID: os.Getpid(), Command: commandLine(), Purpose: purpose, Since: time.Now()})
	if l.f.Truncate(0) == nil {
		l.f.WriteAt(append(b, '\n'), 0)
	}
}

// Release drops the lock. It is safe to call more than once.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	if l.path != "" {
		recordTurn(l.path, time.Since(l.since))
	}
	l.f.Truncate(0)
	l.f.Close()
	l.f = nil
}

// describe names the holder, for a message about wanting the lock for
// purpose. A holder that has not written its record yet, or wrote
// something else, is "another hone process".
func (h holder) describe(purpose string) string {
	if h.PID <= 0 {
		return "another hone process"
	}
	s := fmt.Sprintf("hone pid %d", h.PID)
	if h.Command != "" {
		s += fmt.Sprintf(" (`%s`)", clip(h.Command))
	}
	if !h.Since.IsZero() {
		s += " since " + clock(h.Since, time.Now())
	}
	if h.Purpose != "" && h.Purpose != purpose {
		s += " to " + clip(h.Purpose)
	}
	return s
}

// holderOf reads the holder's record; a zero holder when there is none
// yet or it is not one.
func holderOf(f *os.File) holder {
	b := make([]byte, 1024)
	n, _ := f.ReadAt(b, 0)
	var h holder
	if n == 0 || json.Unmarshal(b[:n], &h) != nil {
		return holder{}
	}
	return h
}

// clock shows t as a time of day, with the date when it is not today.
func clock(t, now time.Time) string {
	t = t.Local()
	if y, m, d := t.Date(); now.Year() == y && now.Month() == m && now.Day() == d {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

// commandLine is this process's command as a user typed it, on one line.
func commandLine() string {
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	return strings.Join(args, " ")
}

// clip keeps a holder's text short and on one line: it is read from a file
// any process can write.
func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:77], "") + "..."
	}
	return s
}

// Held reports whether a live process holds the lock on path. A lock file
// that does not exist, or cannot be opened, is not held by anyone this
// process can see.
func Held(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	// A shared try-lock fails only against an exclusive holder, and takes
	// nothing from it; closing f drops what it took.
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	return errors.Is(err, unix.EWOULDBLOCK)
}
