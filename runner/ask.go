package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

// DefaultWait is how long Ask waits for the fleet when [runner] wait is unset.
const DefaultWait = time.Hour

// askPoll is how often Ask looks at the remote while it waits.
const askPoll = time.Second

// RemoteOf is the runner remote this clone asks for verdicts: `git config
// hone.runnerRemote`, else [runner] remote of hone.toml; "" to judge here.
func RemoteOf(ctx context.Context, ws *workspace.Workspace) string {
	if r := strings.TrimSpace(ws.Store("").Config("hone.runnerRemote")); r != "" {
		return r
	}
	return ws.Config.Runner.Remote
}

// Judge reaches the verdict of a patch the way this clone is set up to: by
// asking the fleet at RemoteOf (Ask) when one is configured, else by judging
// here (verdict.Run). progress is told each phase in a line for people.
func Judge(ctx context.Context, ws *workspace.Workspace, patchID string, opts verdict.Options, progress func(string)) (*verdict.Entry, error) {
	remote := RemoteOf(ctx, ws)
	if remote == "" || opts.Rejudge != "" {
		return verdict.Run(ctx, ws, patchID, opts)
	}
	if opts.Metric != "" || opts.MaxPairs != 0 || opts.Threshold != 0 || opts.Keep {
		return nil, errs.Usagef("this clone asks the runner fleet at %q for verdicts, which judge by the pin's protocol; drop --metric, --max-pairs, --threshold and --keep", remote)
	}
	wait := ws.Config.Runner.Wait.Duration
	if wait <= 0 {
		wait = DefaultWait
	}
	return Ask(ctx, ws, patchID, remote, wait, progress)
}

// Ask pushes the ledger (and so the proposal of patchID) to remote and waits
// up to wait for the fleet's trusted verdict on it, which it returns as a
// local verdict would be. Without one by then (or when ctx ends), it is a
// Busy error saying where the proposal stands: queued, or claimed by which
// runner with how many pairs measured; never a guess at the outcome.
func Ask(ctx context.Context, ws *workspace.Workspace, patchID, remote string, wait time.Duration, progress func(string)) (*verdict.Entry, error) {
	say := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	l := ledger.Open(ws)
	id, err := l.ResolvePatch(ctx, patchID)
	if err != nil {
		return nil, err
	}
	say("pushing proposal %s to %s", id, remote)
	if _, err := l.Push(ctx, remote); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	last, state := "", "queued"
	for {
		if e, err := trustedVerdict(ctx, l, id); err != nil || e != nil {
			return e, err
		}
		fleet, err := l.FetchFleet(ctx, remote)
		if err != nil {
			return nil, err
		}
		if state, err = standing(ctx, l, fleet, id); err != nil {
			return nil, err
		}
		if state != last {
			say("%s", state)
			last = state
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, errs.Busyf("no trusted verdict on %s from the runner fleet at %q within %s; it is %s. Ask again later with hone verdict %s", id, remote, wait, state, id)
		}
		select {
		case <-ctx.Done():
		case <-time.After(askPoll):
		}
		if _, err := l.Pull(ctx, remote); err != nil && ctx.Err() == nil {
			return nil, err
		}
	}
}

// trustedVerdict returns the trusted verdict the local ledger holds on
// patch, or nil.
func trustedVerdict(ctx context.Context, l *ledger.Ledger, patch string) (*verdict.Entry, error) {
	attempts, err := l.Attempts(ctx, ledger.Filter{PatchID: patch})
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		out := a.Outcome()
		if a.PatchID != patch || out == nil {
			continue
		}
		stored, err := l.ByPatch(ctx, patch)
		if err != nil {
			return nil, err
		}
		for _, s := range stored {
			if s.ID != out.ID {
				continue
			}
			var e verdict.Entry
			if err := s.Decode(&e); err != nil {
				return nil, err
			}
			return &e, nil
		}
	}
	return nil, nil
}

// standing says where patch stands in the fleet, for people: claimed by
// which runner (and how many pairs it has measured, which its record
// carries), else its place in the fleet's queue as a runner would read it
// from this clone's copy of the ledger (pulled from the remote): the
// proposals ahead of it that no runner holds yet, and how many are being
// judged.
func standing(ctx context.Context, l *ledger.Ledger, fleet *ledger.Fleet, patch string) (string, error) {
	now := time.Now()
	if c, ok := fleet.Claims[patch]; ok && c.Live(now) {
		s := fmt.Sprintf("claimed by runner %s (class %s), lease until %s", c.Runner, c.Class, c.Expires.Format(time.RFC3339))
		if r, ok := fleet.Runners[c.Runner]; ok && r.Judging == patch {
			if r.Phase != "" {
				s += fmt.Sprintf("; %s as of %s", r.Phase, r.Heartbeat.Format(time.TimeOnly))
			}
			if r.Pairs > 0 {
				s += fmt.Sprintf(", %d pairs so far", r.Pairs)
			}
		}
		return s, nil
	}
	skipped := ""
	queue, err := l.Queue(ctx, ledger.QueueOptions{Pushers: fleet.Pushers, Skip: func(a ledger.Attempt, why string) {
		if a.PatchID == patch {
			skipped = why
		}
	}})
	if err != nil {
		return "", err
	}
	ahead, judging := 0, 0
	for _, a := range queue {
		if c, ok := fleet.Claims[a.PatchID]; ok && c.Live(now) {
			judging++
			continue
		}
		if a.PatchID == patch {
			return fmt.Sprintf("queued: place %d in the fleet's queue (%d ahead, %d being judged)", ahead+1, ahead, judging), nil
		}
		ahead++
	}
	if skipped != "" {
		return "queued, not yet in the fleet's queue: " + skipped, nil
	}
	return "queued", nil
}
