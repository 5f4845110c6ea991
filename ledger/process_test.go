package ledger_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// helperMain lets the test binary act as a separate writer process: with
// HONE_LEDGER_HELPER=append it appends HONE_LEDGER_N profile entries to the
// workspace in the current directory and exits; with append-push it also
// runs `hone ledger push origin` after each entry.
func helperMain() bool {
	mode := os.Getenv("HONE_LEDGER_HELPER")
	if mode == "pre-receive" {
		preReceiveMain()
	}
	if mode != "append" && mode != "append-push" {
		return false
	}
	n, _ := strconv.Atoi(os.Getenv("HONE_LEDGER_N"))
	ws, err := workspace.Open("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	l := ledger.Open(ws)
	tag := os.Getenv("HONE_LEDGER_TAG")
	for i := 0; i < n; i++ {
		e := &testEntry{Note: fmt.Sprintf("%s-%d", tag, i), Samples: []float64{float64(i)}}
		e.Kind, e.Target = ledger.KindProfile, "demo"
		if _, err := l.Append(ctx, e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if mode == "append-push" {
			if _, err := l.Push(ctx, "origin"); err != nil {
				fmt.Fprintf(os.Stderr, "push after entry %d: %v (exit code %d)\n", i, err, int(errs.CodeOf(err)))
				os.Exit(1)
			}
		}
	}
	os.Exit(0)
	return true
}

func writer(dir, tag string, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HONE_LEDGER_HELPER=append", "HONE_LEDGER_N="+strconv.Itoa(n), "HONE_LEDGER_TAG="+tag)
	return cmd
}

// The contention of issue 14: eight clones each append 8 entries and push
// after every one, all at once, to one bare remote. Every push gets through
// (before, 25 of 64 gave up and the remote lost 7 entries).
func TestConcurrentPushersAllGetThrough(t *testing.T) {
	const clones, each = 8, 8
	base := t.TempDir()
	remote := filepath.Join(base, "remote.git")
	testgit.Git(t, base, "init", "-q", "--bare", "-b", "main", remote)
	seed := newRepo(t)
	testgit.Git(t, seed, "push", "-q", remote, "main")
	dirs := make([]string, clones)
	for c := range dirs {
		dirs[c] = filepath.Join(base, fmt.Sprintf("c%d", c))
		testgit.Git(t, base, "clone", "-q", remote, dirs[c])
	}
	var wg sync.WaitGroup
	outs := make([][]byte, clones)
	fails := make([]error, clones)
	for c := range dirs {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			cmd := writer(dirs[c], fmt.Sprintf("c%d", c), each)
			cmd.Env = append(cmd.Env, "HONE_LEDGER_HELPER=append-push")
			outs[c], fails[c] = cmd.CombinedOutput()
		}(c)
	}
	wg.Wait()
	for c, err := range fails {
		if err != nil {
			t.Errorf("clone %d: %v\n%s", c, err, outs[c])
		}
	}
	check := filepath.Join(base, "check")
	testgit.Git(t, base, "clone", "-q", remote, check)
	l := openLedger(t, check)
	if _, err := l.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	got := notes(t, l)
	for c := 0; c < clones; c++ {
		for i := 0; i < each; i++ {
			if k := fmt.Sprintf("c%d-%d", c, i); got[k] != 1 {
				t.Errorf("the remote holds entry %s %d times, want once", k, got[k])
			}
		}
	}
	assertSound(t, check, l)
}

// notes lists the Note field of every entry, to compare against what the
// writers were asked to append.
func notes(t *testing.T, l *ledger.Ledger) map[string]int {
	t.Helper()
	all, err := l.List(ctx, ledger.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range all {
		var e testEntry
		if err := s.Decode(&e); err != nil {
			t.Fatal(err)
		}
		got[e.Note]++
	}
	return got
}

func assertSound(t *testing.T, dir string, l *ledger.Ledger) {
	t.Helper()
	if out, err := gitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	rep, err := l.Verify(ctx, ledger.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 {
		t.Fatalf("Verify found %d problems, first: %+v", len(rep.Problems), rep.Problems[0])
	}
}

func TestConcurrentWriterProcesses(t *testing.T) {
	const writers, each = 8, 100
	dir := newRepo(t)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	outs := make([][]byte, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			outs[w], errs[w] = writer(dir, fmt.Sprintf("w%d", w), each).CombinedOutput()
		}(w)
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v\n%s", w, err, outs[w])
		}
	}
	l := openLedger(t, dir)
	got := notes(t, l)
	if len(got) != writers*each {
		t.Fatalf("ledger holds %d distinct entries, want %d", len(got), writers*each)
	}
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			if k := fmt.Sprintf("w%d-%d", w, i); got[k] != 1 {
				t.Fatalf("entry %s stored %d times", k, got[k])
			}
		}
	}
	if n := strings.Count(testgit.Git(t, dir, "rev-list", "hone/ledger"), "\n") + 1; n != writers*each {
		t.Fatalf("branch has %d commits, want one per entry: %d", n, writers*each)
	}
	assertSound(t, dir, l)
}

func TestKilledWriterLeavesNothingBroken(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	for round := 0; round < 6; round++ {
		cmd := writer(dir, fmt.Sprintf("k%d", round), 1000)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rand.IntN(150)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if _, err := gitErr(dir, "rev-parse", "--verify", "hone/ledger^{commit}"); err != nil && round > 0 {
			t.Fatalf("round %d: the branch does not name a commit after SIGKILL", round)
		}
		assertSound(t, dir, l)
		// The next writer must not be blocked by whatever the killed one held.
		if out, err := writer(dir, fmt.Sprintf("after%d", round), 1).CombinedOutput(); err != nil {
			t.Fatalf("round %d: a writer after the kill failed: %v\n%s", round, err, out)
		}
	}
	got := notes(t, l)
	for round := 0; round < 6; round++ {
		if got[fmt.Sprintf("after%d-0", round)] != 1 {
			t.Fatalf("entry after round %d missing", round)
		}
	}
}
