package lock

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
)

// A long lock's waiters queue, so that they take it in the order they
// asked for it. Polling alone served the newest waiter first: a waiter
// backs off to a try every longPoll, while one that has just arrived tries
// every few milliseconds, so a verdict that had waited for minutes lost
// each turn to the next verdict to arrive, and with agents arriving
// steadily it could wait out maxTurnWait without measuring.
//
// The queue is a directory beside the lock holding one ticket file per
// waiter, named by when it joined. A waiter holds an flock on its own
// ticket, so a ticket whose flock anyone can take belongs to a waiter that
// died, and is removed by the next waiter that looks. Only the first live
// ticket's waiter tries the lock; the others look again every longPoll.

// ticketPrefix starts a ticket being made: it is locked before it gets its
// name in the queue, so that no waiter ever sees a live ticket unlocked.
const ticketPrefix = ".new-"

// staleTicket is how old an unnamed ticket nobody holds must be before it
// is removed: its maker may be between making and locking it.
const staleTicket = time.Minute

type queue struct {
	dir  string
	name string
	f    *os.File
}

// joinQueue puts a ticket for this waiter at the end of the queue of the
// open lock file lock.
func joinQueue(lock *os.File) (*queue, error) {
	path := lock.Name()
	st, err := lock.Stat()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot stat the lock %s", path)
	}
	// Accounts that share a lock through its group (see open) share its
	// queue too: they make tickets in it, and look at and remove each
	// other's.
	group := st.Mode().Perm() & 0o060
	perm := os.FileMode(0o700)
	if group != 0 {
		perm = 0o770
	}
	dir := path + ".queue"
	if err := queueDir(dir, perm); err != nil {
		return nil, err
	}
	// The pid and a random number keep apart two waiters, of one process
	// or two, that join in the same nanosecond: a rename onto another's
	// ticket would replace it.
	tag := fmt.Sprintf("%d-%x", os.Getpid(), rand.Uint64())
	tmp := filepath.Join(dir, ticketPrefix+tag)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err == nil && group != 0 {
		err = f.Chmod(0o600 | group&0o040)
	}
	if err != nil {
		if f != nil {
			f.Close()
			os.Remove(tmp)
		}
		return nil, errs.Wrap(errs.Failure, err, "cannot join the queue for %s", path)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, errs.Wrap(errs.Failure, err, "cannot lock a ticket in %s", dir)
	}
	// Zero-padded, so that names sort in the order waiters joined.
	name := fmt.Sprintf("%020d-%s", time.Now().UnixNano(), tag)
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, errs.Wrap(errs.Failure, err, "cannot join the queue for %s", path)
	}
	return &queue{dir: dir, name: name, f: f}, nil
}

// queueDir makes the queue directory with mode perm, closed to other
// accounts like the lock itself (see open): one that could write in it
// could queue ahead of every waiter forever.
func queueDir(dir string, perm os.FileMode) error {
	err := os.Mkdir(dir, perm)
	if err == nil {
		// Past the umask, for the group that shares the lock, keeping the
		// setgid bit a shared parent passes on.
		var fi os.FileInfo
		if fi, err = os.Lstat(dir); err == nil && fi.Mode().Perm() != perm {
			err = os.Chmod(dir, fi.Mode()&os.ModeSetgid|perm)
		}
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return errs.Wrap(errs.Failure, err, "cannot create the queue %s", dir)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot stat the queue %s", dir)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o007 != 0 {
		return errs.New(errs.Failure, "the queue %s is not a directory closed to other accounts; remove it, hone makes its own", dir)
	}
	return nil
}

// ahead counts the live tickets before this waiter's, removing the
// tickets of dead waiters ahead of it: 0 when it is first.
func (q *queue) ahead() (int, error) {
	ents, err := os.ReadDir(q.dir)
	if err != nil {
		return 0, errs.Wrap(errs.Failure, err, "cannot read the queue %s", q.dir)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	n := 0
	for _, name := range names {
		switch {
		case name == q.name:
			return n, nil
		case strings.HasPrefix(name, ticketPrefix):
			removeDead(filepath.Join(q.dir, name), staleTicket)
		case !removeDead(filepath.Join(q.dir, name), 0):
			n++
		}
	}
	// Our own ticket is gone (someone removed the queue): we are first
	// among those who are left.
	return 0, nil
}

// removeDead removes the ticket at path if no waiter holds it and it is at
// least age old, and reports whether it was dead.
func removeDead(path string, age time.Duration) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil {
		return false
	}
	if st, err := f.Stat(); err != nil || time.Since(st.ModTime()) < age {
		return false
	}
	os.Remove(path)
	return true
}

// leave takes this waiter's ticket out of the queue.
func (q *queue) leave() {
	os.Remove(filepath.Join(q.dir, q.name))
	q.f.Close()
}
