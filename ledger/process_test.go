package ledger_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// helperMain lets the test binary act as a separate writer process: with
// HONE_LEDGER_HELPER=append it appends HONE_LEDGER_N profile entries to the
// workspace in the current directory and exits.
func helperMain() bool {
	if os.Getenv("HONE_LEDGER_HELPER") != "append" {
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
