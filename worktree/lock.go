package worktree

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/repo"
)

// lockSession serializes enter and exit on one session across processes.
// It does not wait: a concurrent enter or exit fails at once with Busy
// (exit 8), naming the holder, and changes nothing. A lock whose holder died
// is free (see package lock).
func lockSession(repo *repo.Repo, session string) (*lock.Lock, error) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	return lock.Acquire(ctx, filepath.Join(sessionsDir(repo), session+".lock"), fmt.Sprintf("enter or exit worktree session %q", session))
}
