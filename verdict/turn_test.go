package verdict

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
)

// timedMeter gives the test's verdicts the real meter: the machine's turn
// is a timed meter's to take, and the work meter of the test builds reads
// no clock and takes none. What the clock decides is not asserted.
func timedMeter(t *testing.T) { t.Setenv(tier.Env, "measure") }

// While another hone measures on the machine, a verdict builds and runs
// its gates, then waits: no pair of its own starts until the other's turn
// ends, and it then measures and decides as usual.
func TestBenchesOnOneMachineTakeTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.lock")
	t.Setenv(BenchLockEnv, path)
	timedMeter(t)
	f := newFixture(t, "ctarget", "c", cToml)
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 2")}), "b2b2b2b2b2b2b2b2", "do half the walks")
	other, err := lock.Acquire(context.Background(), path, "measure on this machine")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		told     sync.Once // the wait is reported again when the queue moves
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
				told.Do(func() { close(waited) })
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
	if e.Bench == nil || e.Bench.Pairs == 0 || e.Verdict == ledger.VerdictError {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	if benched.Before(released) {
		t.Errorf("bench started %v, the other turn ended %v", benched, released)
	}
	if held, err := lock.Acquire(context.Background(), path, "check"); err != nil {
		t.Errorf("the verdict kept the machine's turn: %v", err)
	} else {
		held.Release()
	}
}

// Root's turn lives where only root may write. In a world-writable
// directory (/run/lock is one) any account could make hone's directory
// first and leave in it a file to hold or a link for root to write through.
func TestRootsBenchLockIsWhereOnlyRootWrites(t *testing.T) {
	for dir := filepath.Dir(rootBenchLock); ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		if err == nil && fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s is %v: other accounts may write where root's bench lock lives", dir, fi.Mode())
		}
		if dir == "/" {
			break
		}
	}
}

// A link where the machine's turn belongs stops the verdict before it
// measures, and the file it names is left as it was.
func TestABenchLockLinkIsNeverWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	victim, path := filepath.Join(dir, "victim"), filepath.Join(dir, "bench.lock")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BenchLockEnv, path)
	timedMeter(t)
	f := newFixture(t, "ctarget", "c", cToml)
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 2")}), "b3b3b3b3b3b3b3b3", "do half the walks")
	e, err := Run(context.Background(), f.ws, "b3b3b3b3b3b3b3b3", Options{})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("verdict with a link for the bench lock: %v; want it refused", err)
	}
	if e != nil && e.Verdict == ledger.VerdictAccepted {
		t.Errorf("accepted without the machine's turn: %s", e.Summary)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}

// A calibration measures in one turn of the machine: its sizing runs and
// every session wait for another hone's turn once, and none of them runs
// until that turn ends.
func TestACalibrationWaitsForTheMachineOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.lock")
	t.Setenv(BenchLockEnv, path)
	f := newFixture(t, "ctarget", "c", cToml)
	other, err := lock.Acquire(context.Background(), path, "measure on this machine")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		waits    int
		measured bool
		waited   = make(chan struct{})
	)
	done := make(chan error, 1)
	var c *CalibrationEntry
	go func() {
		var err error
		c, err = Calibrate(context.Background(), f.ws, "c", CalibrationOptions{Sessions: 1, Inject: []float64{0.5}, MaxPairs: 5, Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			switch p.Phase {
			case turnPhase:
				if waits++; waits == 1 {
					close(waited)
				}
			case "estimate", "bench":
				measured = true
			}
		}})
		done <- err
	}()
	select {
	case <-waited:
	case err := <-done:
		t.Fatalf("the calibration ended without waiting for the turn another hone holds: %v", err)
	}
	time.Sleep(2 * time.Second)
	mu.Lock()
	early := measured
	mu.Unlock()
	other.Release()
	if early {
		t.Fatal("the calibration measured while another hone held the machine's turn")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if waits != 1 || c.AA.Sessions != 1 || len(c.Injected) != 1 || c.Injected[0].Sessions != 1 {
		t.Errorf("waited for the machine %d times (want once); A/A %+v, injected %+v", waits, c.AA, c.Injected)
	}
}
