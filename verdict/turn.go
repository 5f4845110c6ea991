package verdict

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
)

// A machine's benches take turns. Two verdicts measuring at once share the
// cores, caches and memory bandwidth, and each one's figures carry the
// other's load: beside another test package's verdicts a harness run's
// CPU time moved by a third, so a twofold gain measured inconclusive.
// Builds and gates decide on outputs, not time, and still run side by
// side. The turn is an flock, so a killed hone gives it up at once.

// BenchLockEnv names the file whose lock gives this machine's benches
// their turns, for an operator who runs hones under several accounts that
// must share one (each account has its own by default).
const BenchLockEnv = "HONE_BENCH_LOCK"

// maxTurnWait bounds the wait for the machine's turn: a queue of verdicts
// an hour long is an operator's problem, not one to wait out silently.
const maxTurnWait = time.Hour

// rootBenchLock is root's turn. Its directory must be one only root may
// write: in a world-writable one such as /run/lock, any account could make
// the directory first and put in it a file of its own to hold, or a link
// for root to write through.
const rootBenchLock = "/run/hone/bench.lock"

// benchLockPath is root's in /run, and any other account's in its own
// cache directory, so no one else can take it and starve the account's
// benches.
func benchLockPath() (string, error) {
	if p := os.Getenv(BenchLockEnv); p != "" {
		return p, nil
	}
	if os.Geteuid() == 0 {
		return rootBenchLock, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "no place for this account's bench lock: set HOME, or %s to a file only this account may open", BenchLockEnv)
	}
	return filepath.Join(dir, "hone", "bench.lock"), nil
}

// turnPhase is the progress phase of a verdict waiting for the machine's
// turn to measure (Progress.Holder and Ahead say behind whom).
const turnPhase = "wait for the machine"

// benchTurn waits for the machine's turn to measure, saying so through
// progress (when not nil) while another hone holds it.
func benchTurn(ctx context.Context, progress func(Progress)) (*lock.Lock, error) {
	path, err := benchLockPath()
	if err != nil {
		return nil, err
	}
	wait, cancel := context.WithTimeout(ctx, maxTurnWait)
	defer cancel()
	var waiting func(lock.Waiting)
	if progress != nil {
		waiting = func(w lock.Waiting) {
			progress(Progress{Phase: turnPhase, Holder: w.Holder, Ahead: w.Ahead, Expected: w.Expected, Turn: w.Turn})
		}
	}
	return lock.AcquireLong(wait, path, "measure on this machine", waiting)
}
