package verdict

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/ledger"
)

// While another hone measures on the machine, a verdict builds and runs
// its gates, then waits: no pair of its own starts until the other's turn
// ends, and it then measures and decides as usual.
func TestBenchesOnOneMachineTakeTurns(t *testing.T) {
	t.Setenv(BenchLockEnv, filepath.Join(t.TempDir(), "bench.lock"))
	f := newFixture(t, "ctarget", "c", cToml)
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 2")}), "b2b2b2b2b2b2b2b2", "do half the walks")
	other, err := lock.Acquire(context.Background(), benchLockPath(), "measure on this machine")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		waited   = make(chan struct{})
		released time.Time
		benched  time.Time
	)
	done := make(chan error, 1)
	var e *Entry
	go func() {
		var err error
		e, err = Run(context.Background(), f.ws, "b2b2b2b2b2b2b2b2", Options{Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case p.Phase == turnPhase:
				close(waited)
			case p.Phase == "bench" && benched.IsZero():
				benched = time.Now()
			}
		}})
		done <- err
	}()
	select {
	case <-waited:
	case err := <-done:
		t.Fatalf("the verdict ended without waiting for the turn another hone holds: %v", err)
	}
	// Long enough for a verdict that ignored the lock to start its pairs.
	time.Sleep(2 * time.Second)
	mu.Lock()
	released = time.Now()
	early := !benched.IsZero()
	mu.Unlock()
	other.Release()
	if early {
		t.Fatal("the verdict measured while another hone held the machine's turn")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictAccepted, ReasonImproved)
	if benched.Before(released) {
		t.Errorf("bench started %v, the other turn ended %v", benched, released)
	}
	if held, err := lock.Acquire(context.Background(), benchLockPath(), "check"); err != nil {
		t.Errorf("the verdict kept the machine's turn: %v", err)
	} else {
		held.Release()
	}
}
