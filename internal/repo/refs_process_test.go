package repo_test

import (
	"fmt"
	"github.com/hone-perf/hone/internal/repo"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// counterRef is the ref the writer processes count up in.
const counterRef = "refs/hone/test/counter"

// With HONE_REFS_HELPER=<n> the test binary is a writer process: it counts
// counterRef up n times, one compare-and-swap each, in the repository of the
// current directory.
func TestMain(m *testing.M) {
	if n, err := strconv.Atoi(os.Getenv("HONE_REFS_HELPER")); err == nil {
		if err := countUp(n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func countUp(n int) error {
	r, err := repo.Open("")
	if err != nil {
		return err
	}
	refs := r.Refs()
	for range n {
		_, err := refs.Update(ctx, counterRef, func(tip plumbing.Hash, ok bool) (plumbing.Hash, error) {
			return counterHash(counterValue(tip, ok) + 1), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func counterHash(n uint64) plumbing.Hash { return plumbing.NewHash(fmt.Sprintf("%040x", n)) }

func counterValue(h plumbing.Hash, ok bool) uint64 {
	if !ok {
		return 0
	}
	v, _ := strconv.ParseUint(h.String()[24:], 16, 64)
	return v
}

func writer(dir string, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HONE_REFS_HELPER="+strconv.Itoa(n))
	return cmd
}

func readCounter(t *testing.T, dir string) uint64 {
	t.Helper()
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, ok, err := r.Refs().Read(counterRef)
	if err != nil {
		t.Fatalf("the counter ref is unreadable: %v", err)
	}
	return counterValue(h, ok)
}

// Eight processes counting up one ref lose no update: every swap saw the
// value the previous one wrote.
func TestConcurrentWritersLoseNoUpdate(t *testing.T) {
	const writers, each = 8, 50
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	var wg sync.WaitGroup
	outs := make([][]byte, writers)
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() { outs[w], errs[w] = writer(dir, each).CombinedOutput() })
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v\n%s", w, err, outs[w])
		}
	}
	if got := readCounter(t, dir); got != writers*each {
		t.Fatalf("counter = %d, want %d", got, writers*each)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", counterRef+".lock")); !os.IsNotExist(err) {
		t.Fatal("a ref lock outlived the writers")
	}
}

// A writer killed at a random moment (holding hone's lock, the ref lock, or
// nothing) leaves the ref readable, never moved backwards, and the next
// writer is not blocked by anything it held.
func TestKilledWriterBlocksNoOne(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	last := uint64(0)
	for round := range 6 {
		cmd := writer(dir, 100000)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rand.IntN(150)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		killed := readCounter(t, dir)
		if killed < last {
			t.Fatalf("round %d: the counter went back from %d to %d", round, last, killed)
		}
		if out, err := writer(dir, 1).CombinedOutput(); err != nil {
			t.Fatalf("round %d: a writer after the kill failed: %v\n%s", round, err, out)
		}
		if got := readCounter(t, dir); got != killed+1 {
			t.Fatalf("round %d: counter %d after one more update, want %d", round, got, killed+1)
		}
		last = killed + 1
	}
}
