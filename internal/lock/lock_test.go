package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testproc"
)

// With HONE_LOCK_HOLD=<path> the test binary is a separate process that
// takes the lock, says "locked" and holds it until killed: holders in the
// tests are real processes, as they are in use.
func TestMain(m *testing.M) {
	if p := os.Getenv("HONE_LOCK_QUEUE"); p != "" {
		l, err := AcquireLong(context.Background(), p, "wait in the queue for a test", func(Waiting) { fmt.Println("queued") })
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(int(errs.CodeOf(err)))
		}
		fmt.Println("locked")
		l.Release()
		os.Exit(0)
	}
	if p := os.Getenv("HONE_LOCK_HOLD"); p != "" {
		if _, err := Acquire(context.Background(), p, "hold the lock for a test"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(int(errs.CodeOf(err)))
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hold starts a process that holds the lock on path until the test ends or
// it is killed.
func hold(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "holder-arg")
	cmd.Env = append(os.Environ(), "HONE_LOCK_HOLD="+path)
	testproc.StartReady(t, cmd, "locked")
	return cmd
}

func withTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A second process wanting a held lock is told busy (exit 8), with the
// holder's pid, its command and what it is doing, and gets the lock once
// the holder has released it.
func TestBusyNamesTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "x.lock")
	holder := hold(t, path)
	_, err := Acquire(withTimeout(t, 100*time.Millisecond), path, "update refs")
	if errs.CodeOf(err) != errs.Busy {
		t.Fatalf("Acquire of a held lock: %v; want busy (exit 8)", err)
	}
	for _, want := range []string{
		"cannot update refs: held by hone pid " + fmt.Sprint(holder.Process.Pid),
		"(`lock.test -test.run=^$ -- holder-arg`)",
		" since ", "to hold the lock for a test", "retry when it has finished",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("busy message %q lacks %q", err, want)
		}
	}
}

// A holder that never releases cannot make a waiter wait past its deadline,
// and a ctx without one gets DefaultWait, not forever.
func TestWaitEndsAtTheDeadline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	hold(t, path)
	const d = 300 * time.Millisecond
	start := time.Now()
	_, err := Acquire(withTimeout(t, d), path, "wait")
	if took := time.Since(start); errs.CodeOf(err) != errs.Busy || took < d || took > d+5*time.Second {
		t.Fatalf("Acquire returned %v after %v; want busy soon after %v", err, took, d)
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := Acquire(expired, path, "try once"); errs.CodeOf(err) != errs.Busy {
		t.Fatalf("Acquire with a past deadline: %v; want busy at once", err)
	}
}

// A past deadline still tries once, so "fail at once if held" callers get a
// free lock.
func TestPastDeadlineTakesAFreeLock(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	l, err := Acquire(expired, filepath.Join(t.TempDir(), "x.lock"), "try once")
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	l.Release()
}

// Cancelling a waiter stops its wait with the context's error, as a failure
// rather than busy: nobody ran out of patience, the caller gave up.
func TestCancelledWaiterStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	hold(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Acquire(ctx, path, "wait")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if errs.CodeOf(err) != errs.Failure || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Acquire: %v; want a failure wrapping context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled Acquire kept waiting")
	}
}

// A holder killed with SIGKILL cannot release anything itself: the kernel
// drops its flock, and a waiter that was already waiting gets the lock.
func TestKilledHolderFreesTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder := hold(t, path)
	got := make(chan error, 1)
	go func() {
		l, err := Acquire(withTimeout(t, 20*time.Second), path, "wait for a dead holder")
		if err == nil {
			l.Release()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	holder.Wait()
	if err := <-got; err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
}

// Two holders in one process exclude each other too: the lock is on the
// open file, not the process.
func TestExclusiveWithinAProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(context.Background(), path, "first")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(withTimeout(t, 50*time.Millisecond), path, "second"); errs.CodeOf(err) != errs.Busy ||
		!strings.Contains(err.Error(), fmt.Sprintf("hone pid %d", os.Getpid())) || !strings.Contains(err.Error(), "to first") {
		t.Fatalf("second Acquire: %v; want busy naming this process", err)
	}
	l.Release()
	l2, err := Acquire(withTimeout(t, time.Second), path, "second")
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

// A holder record that is missing or not hone's still gives a one-line
// message, and text planted in it cannot break the line.
func TestForeignHolderRecord(t *testing.T) {
	for _, content := range []string{"", "pid 1 since then\n", `{"pid":7,"command":"evil\nSECOND LINE","purpose":"x"}`} {
		path := filepath.Join(t.TempDir(), "x.lock")
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		f.WriteString(content)
		_, err = Acquire(withTimeout(t, 20*time.Millisecond), path, "x")
		f.Close()
		if errs.CodeOf(err) != errs.Busy || strings.Contains(err.Error(), "\n") {
			t.Errorf("record %q: %q", content, err)
		}
	}
}

// Held sees a live holder in another process, and no holder once it died:
// what tells a running verdict from one that was killed.
func TestHeldSeesOnlyLiveHolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "x.lock")
	if Held(path) {
		t.Fatal("a lock file that does not exist is held")
	}
	holder := hold(t, path)
	if !Held(path) {
		t.Fatal("the lock of a live holder is not held")
	}
	holder.Process.Kill()
	holder.Wait()
	if Held(path) {
		t.Fatal("the lock of a killed holder is still held")
	}
	if l, err := Acquire(withTimeout(t, time.Second), path, "take it"); err != nil {
		t.Fatalf("Held left the lock taken: %v", err)
	} else {
		l.Release()
	}
}

// A lock's file is this account's alone: made 0600, and one that an older
// hone made open to every account is closed again, so no other account can
// open it to hold the lock.
func TestLockFilesAreThisAccountsAlone(t *testing.T) {
	dir := t.TempDir()
	fresh, old := filepath.Join(dir, "fresh.lock"), filepath.Join(dir, "old.lock")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(old, 0o644) // past the umask
	for _, path := range []string{fresh, old} {
		l, err := Acquire(withTimeout(t, time.Second), path, "x")
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", filepath.Base(path), fi.Mode(), err)
		}
	}
}

// A symbolic link where a lock belongs is refused, and what it names is
// left as it was: hone truncates and writes its lock files.
func TestALinkInPlaceOfALockIsRefused(t *testing.T) {
	dir := t.TempDir()
	victim, path := filepath.Join(dir, "victim"), filepath.Join(dir, "x.lock")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	_, err := Acquire(withTimeout(t, time.Second), path, "x")
	if errs.CodeOf(err) != errs.Failure || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Acquire through a link: %v; want a failure naming the link", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}

// Another local account cannot hold a lock this account uses: it cannot
// open the lock's file, and a file of its own that every account may open
// is refused rather than shared with it.
func TestAnotherAccountCannotHoldALock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another account")
	}
	for _, tool := range []string{"setpriv", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	dir, err := os.MkdirTemp("", "lock-accounts-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(dir, "ours.lock")
	l, err := Acquire(withTimeout(t, time.Second), ours, "x")
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		"flock", "--nonblock", "--shared", ours, "true").CombinedOutput()
	if err == nil {
		t.Errorf("nobody took a shared flock on our lock file: %s", out)
	}

	theirs := filepath.Join(dir, "theirs.lock")
	if err := os.WriteFile(theirs, []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(withTimeout(t, time.Second), theirs, "x"); errs.CodeOf(err) != errs.Failure || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("Acquire of another account's open lock file: %v; want a failure naming its owner", err)
	}
	if b, _ := os.ReadFile(theirs); string(b) != "theirs\n" {
		t.Errorf("the other account's file now holds %q", b)
	}
}

// Waiters for a long lock take it in the order they asked: one that has
// waited long enough to back off to its slowest tries still goes before
// each waiter that arrives after it, though those try every millisecond
// at first (the newest waiter won nearly every turn when they polled).
func TestLongLockWaitersAreServedInTheOrderTheyCame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turn.lock")
	first, err := AcquireLong(withTimeout(t, 10*time.Second), path, "measure", nil)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 8)
	wait := func(name string) {
		go func() {
			l, err := AcquireLong(withTimeout(t, 30*time.Second), path, "measure", nil)
			if err != nil {
				order <- name + ": " + err.Error()
				return
			}
			order <- name
			time.Sleep(20 * time.Millisecond)
			l.Release()
		}()
	}
	queued := func(n int) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if ents, _ := os.ReadDir(path + ".queue"); len(ents) == n {
				return
			}
			if time.Now().After(end) {
				t.Fatalf("the queue never held %d waiters", n)
			}
		}
	}
	wait("old")
	queued(1)
	// Long enough for the old waiter's pauses to have grown to the longest.
	time.Sleep(3 * longPoll)
	for i, name := range []string{"new1", "new2", "new3"} {
		wait(name)
		queued(2 + i)
	}
	first.Release()
	for _, want := range []string{"old", "new1", "new2", "new3"} {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("%s took the lock; want %s first", got, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("nobody took the lock; want %s", want)
		}
	}
	if ents, _ := os.ReadDir(path + ".queue"); len(ents) != 0 {
		t.Errorf("the queue still holds %d tickets", len(ents))
	}
}

// A waiter that died in the queue (its ticket left, but held by nobody)
// holds up no one, and a waiter that gives up leaves no ticket behind.
func TestADeadWaiterHoldsUpNoOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turn.lock")
	if err := queueDir(path+".queue", 0o700); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(path+".queue", fmt.Sprintf("%020d-%d", 1, 1))
	if err := os.WriteFile(dead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireLong(withTimeout(t, 10*time.Second), path, "measure", nil)
	if err != nil {
		t.Fatalf("behind a dead waiter: %v", err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead waiter's ticket is still there (%v)", err)
	}
	called := false
	_, err = AcquireLong(withTimeout(t, 300*time.Millisecond), path, "measure", func(Waiting) { called = true })
	if errs.CodeOf(err) != errs.Busy || !called {
		t.Fatalf("AcquireLong of a held lock: %v (told it waits: %v); want busy, told", err, called)
	}
	if ents, _ := os.ReadDir(path + ".queue"); len(ents) != 0 {
		t.Errorf("a waiter that gave up left %d tickets", len(ents))
	}
	l.Release()
}

// Accounts that share a long lock through its group (HONE_BENCH_LOCK for a
// runner's accounts) share its queue: another account's waiter joins it
// behind ours and takes the lock when ours releases it, and nothing in the
// queue is open to accounts outside the group.
func TestAccountsSharingALockShareItsQueue(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another account")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	dir, err := os.MkdirTemp("", "lock-group-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The operator's shared directory: the group's, setgid, closed to others.
	if err := os.Chown(dir, 0, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, os.ModeSetgid|0o770); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bench.lock")
	if err := os.WriteFile(path, nil, 0o660); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		t.Fatal(err)
	}
	ours, err := AcquireLong(withTimeout(t, 10*time.Second), path, "measure", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := &testproc.Buffer{}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HONE_LOCK_QUEUE="+path)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "queued"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the other account never queued: %s", out.String())
		}
	}
	fi, err := os.Stat(path + ".queue")
	if err != nil || fi.Mode().Perm()&0o007 != 0 || fi.Mode().Perm()&0o070 != 0o070 {
		t.Fatalf("the queue: %v %v; want it the group's and closed to others", fi.Mode(), err)
	}
	ents, _ := os.ReadDir(path + ".queue")
	if len(ents) != 1 {
		t.Fatalf("the queue holds %d tickets; want the other account's", len(ents))
	}
	ours.Release()
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "locked") {
		t.Fatalf("the other account's waiter: %v\n%s", err, out.String())
	}
}

// A waiter for a long lock is told at once who holds it and how many wait
// before it, and again whenever that changes: here when the waiter ahead
// of it dies.
func TestLongWaiterIsToldTheHolderAndItsPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.lock")
	holder := hold(t, path)
	queued := exec.Command(os.Args[0], "-test.run=^$")
	queued.Env = append(os.Environ(), "HONE_LOCK_QUEUE="+path)
	testproc.StartReady(t, queued, "queued")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var seen []Waiting
	_, err := AcquireLong(ctx, path, "measure", func(w Waiting) {
		seen = append(seen, w)
		switch w.Ahead {
		case 1:
			queued.Process.Kill()
		case 0:
			cancel()
		}
	})
	if errs.CodeOf(err) != errs.Failure || len(seen) != 2 || seen[0].Ahead != 1 || seen[1].Ahead != 0 {
		t.Fatalf("AcquireLong: %v; told %+v; want one waiter ahead, then none, then the cancel", err, seen)
	}
	for _, w := range seen {
		if !strings.Contains(w.Holder, fmt.Sprintf("hone pid %d", holder.Process.Pid)) {
			t.Errorf("holder %q; want the holding process", w.Holder)
		}
	}
}

// A long lock's holder records how long it held it, and a waiter is told
// when its turn is likely: the holder's rest of a median turn, then a
// median turn for each waiter ahead. Turns of an hour make the few
// milliseconds the test itself takes immaterial.
func TestLongWaiterIsToldWhenItsTurnIsExpected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.lock")
	l, err := AcquireLong(withTimeout(t, 10*time.Second), path, "measure", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if turns := readTurns(turnsPath(path)); len(turns) != 1 {
		t.Fatalf("after one long turn the lock's file of turns holds %v; want that turn", turns)
	}
	for range 2 {
		recordTurn(path, time.Hour)
	}
	hold(t, path)
	queued := exec.Command(os.Args[0], "-test.run=^$")
	queued.Env = append(os.Environ(), "HONE_LOCK_QUEUE="+path)
	testproc.StartReady(t, queued, "queued")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var seen Waiting
	start := time.Now()
	AcquireLong(ctx, path, "measure", func(w Waiting) { seen = w; cancel() })
	// The held turn started just now, the one waiter ahead will take a
	// median turn: about two hours from now.
	if seen.Turn != time.Hour || seen.Expected.Before(start.Add(2*time.Hour-time.Minute)) || seen.Expected.After(time.Now().Add(2*time.Hour)) {
		t.Fatalf("told %+v at %s; want a median turn of 1h and a turn expected two hours on", seen, start.Format(time.TimeOnly))
	}
}

// A waiter of a lock with no recorded turns is told no estimate.
func TestNoEstimateWithoutPastTurns(t *testing.T) {
	if got := expectedTurn(0, time.Now(), 3, time.Now()); !got.IsZero() {
		t.Errorf("expected turn with no past turns: %s; want none", got)
	}
	now := time.Now()
	if got := expectedTurn(time.Minute, now.Add(-5*time.Minute), 0, now); !got.Equal(now) {
		t.Errorf("a holder past its median turn, no one ahead: %s; want now (%s)", got, now)
	}
}
