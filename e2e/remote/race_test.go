package remote

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Two pushes race through the hook, each giving a new inbox one entry path
// with other bytes: either alone is an ordinary append, and both taken
// would stop every fold that meets them. The server checks one push at a
// time, holding its receive lock until git has moved the pushed refs, so
// the second push is judged against the first and refused. The test
// builds' seam makes the race certain, not likely: the first push holds on
// after its checks, inside the lock, until the second has reached the hook
// (waiting for the lock, or, without it, checked against a server the
// first has not changed yet).
func TestTwoRacingPushesCannotBothTakeOnePath(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent, _ := w.pushedProposal()
	p, main := profileAt("ab", "main")
	_, other := profileAt("ab", "other")
	tip := strings.TrimSpace(w.must(agent, "git", "rev-parse", "refs/heads/hone/ledger"))
	commits := []string{w.plant(agent, tip, map[string]string{p: main}), w.plant(agent, tip, map[string]string{p: other})}
	w.must(agent, "git", "update-ref", "refs/heads/hone/ledger", tip)

	pause := t.TempDir()
	pushes := make([]*racer, 2)
	for i, writer := range []string{"a1a1a1a1a1a1a1a1", "a2a2a2a2a2a2a2a2"} {
		pushes[i] = w.race(agent, pause, "git", "push", "origin", commits[i]+":refs/hone/inbox/"+writer+"/ledger")
		// The first push is checked and holding on before the second
		// starts; the second has reached the hook before either goes on.
		pushes[i].until(t, pause, i+1)
	}
	marks, _ := filepath.Glob(filepath.Join(pause, "*.*"))
	t.Logf("the hooks reached: %v", marks)
	if err := os.WriteFile(filepath.Join(pause, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for _, r := range pushes {
		<-r.done
		if r.code == 0 {
			admitted++
		} else if !strings.Contains(r.out.String(), "already holds with other bytes") {
			t.Fatalf("a racing push failed for another reason:\n%s", r.out.String())
		}
	}
	if admitted != 1 {
		t.Fatalf("%d of the two racing pushes were taken, want 1\n%s\n%s", admitted, pushes[0].out.String(), pushes[1].out.String())
	}
	w.honestStepsStillWork(w.clone("runner", "runner"), true)
}

// racer is a command running beside the test.
type racer struct {
	out  bytes.Buffer
	code int
	done chan struct{}
}

// race starts a command in dir with the test builds' receive pause
// folder set, and returns at once.
func (w *world) race(dir, pause string, args ...string) *racer {
	w.t.Helper()
	r := &racer{done: make(chan struct{})}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(w.env(), "HONE_TEST_RECEIVE_PAUSE="+pause)
	cmd.Stdout, cmd.Stderr = &r.out, &r.out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		defer close(r.done)
		cmd.Wait()
		r.code = cmd.ProcessState.ExitCode()
	}()
	return r
}

// until waits until the pause folder holds n marks of hooks that reached
// it; a racer that ends first fails the test.
func (r *racer) until(t *testing.T, pause string, n int) {
	t.Helper()
	for {
		marks, err := filepath.Glob(filepath.Join(pause, "*.*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(marks) >= n {
			return
		}
		select {
		case <-r.done:
			t.Fatalf("the push ended before its hook reached the pause (exit %d):\n%s", r.code, r.out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// The hook cannot hold the receive lock past its own end, and git moves the
// pushed refs after it: a holder keeps the lock until git receive-pack
// has ended. Seen from outside while git runs the push's update hook (after
// hone's pre-receive has exited, before any ref moved), the lock is held;
// once the push is done, it is free.
func TestAPushHoldsTheReceiveLockUntilGitMovedItsRefs(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent, _ := w.pushedProposal()
	tip := strings.TrimSpace(w.must(agent, "git", "rev-parse", "refs/heads/hone/ledger"))
	p, body := profileAt("ac", "main")
	c := w.plant(agent, tip, map[string]string{p: body})
	w.must(agent, "git", "update-ref", "refs/heads/hone/ledger", tip)
	update := "#!/bin/sh\nd=\"$HONE_TEST_RECEIVE_PAUSE\"\n[ -n \"$d\" ] || exit 0\n: > \"$d/$$.updating\"\nwhile [ ! -e \"$d/updated\" ]; do sleep 0.01; done\n"
	if err := os.WriteFile(filepath.Join(w.server, "hooks", "update"), []byte(update), 0o755); err != nil {
		t.Fatal(err)
	}

	pause := t.TempDir()
	if err := os.WriteFile(filepath.Join(pause, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	push := w.race(agent, pause, "git", "push", "origin", c+":refs/hone/inbox/a1a1a1a1a1a1a1a1/ledger")
	push.until(t, pause, 2) // checked by hone's hook, then in git's update hook
	lockFile := filepath.Join(w.server, "hone-receive.lock")
	if free(t, lockFile) {
		t.Fatal("the receive lock is free while git has yet to move the pushed ref")
	}
	if err := os.WriteFile(filepath.Join(pause, "updated"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-push.done
	if push.code != 0 {
		t.Fatalf("the push was refused:\n%s", push.out.String())
	}
	for !free(t, lockFile) {
		time.Sleep(10 * time.Millisecond)
	}
}

// free reports whether the flock on path can be taken now (and lets it go).
func free(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// Two runners race for one proposal: the first one's claim push holds on
// inside the receive lock until the second runner's push has reached the
// hook. The second is judged after the first's claim is in, and git's own
// ref lock would refuse it anyway (a claim is created with the expected
// old value zero): one claim, one verdict, and both runners' rounds end
// well.
func TestTwoRunnersRacingForOneProposalJudgeItOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	_, id := w.pushedProposal()
	runners := []string{w.clone("runner-1", "runner"), w.clone("runner-2", "runner")}
	pause := t.TempDir()
	rounds := make([]*racer, 2)
	for i, dir := range runners {
		rounds[i] = w.race(dir, pause, w.hone, "runner", "--once", "--name", fmt.Sprintf("runner%d", i+1))
		rounds[i].until(t, pause, i+1)
	}
	marks, _ := filepath.Glob(filepath.Join(pause, "*.*"))
	t.Logf("the hooks reached: %v", marks)
	if err := os.WriteFile(filepath.Join(pause, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	judged := 0
	for _, r := range rounds {
		<-r.done
		if r.code != 0 {
			t.Fatalf("a racing runner's round failed (exit %d):\n%s", r.code, r.out.String())
		}
		judged += strings.Count(r.out.String(), "verdict "+id+":")
	}
	if judged != 1 {
		t.Fatalf("the two racing runners judged %s %d times, want once\n%s\n%s", id, judged, rounds[0].out.String(), rounds[1].out.String())
	}
	fresh := w.clone("fresh", "")
	w.must(fresh, "hone", "ledger", "verify", "--require-signed")
	if out := w.must(fresh, "hone", "ledger", "list", "--kind", "verdict", "--json"); strings.Count(out, `"patch_id": "`+id+`"`) != 1 {
		t.Fatalf("the ledger holds other than one verdict on %s:\n%s", id, out)
	}
}
