package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// stopTimeout bounds how long a stopping runner tries to release its claim:
// a service manager waits for it, and a claim left behind still ends with
// its lease, or at once when the runner starts again under its name.
const stopTimeout = 30 * time.Second

// releaseRetrying pushes a finished verdict with its claim's release until
// the push goes through, retrying what may pass (the remote away, a push
// that broke off) with backoff and renewing the lease meanwhile, until
// shortly before the lease ends: the release is a compare-and-swap on this
// runner's own claim, so no retry can publish a second outcome. It gives up
// on a refusal, on a claim another runner took, and when ctx ends (the stop
// of this runner: one last try, then the claim is left to the lease).
func (r *runner) releaseRetrying(ctx context.Context, patch string, cl *held, sc *scratch, e *verdict.Entry) error {
	pctx := context.WithoutCancel(ctx)
	tip, notes, err := sc.tips()
	if err == nil {
		tip, notes, err = r.l.Publishable(pctx, r.opts.Remote, tip, notes)
	}
	if err != nil {
		return errors.Join(err, r.giveUp(pctx, patch, cl))
	}
	for n := 1; ; n++ {
		err := r.releaseOnce(pctx, patch, cl, tip, notes, e)
		if err == nil {
			break
		}
		if errors.Is(err, ledger.ErrLostRace) && r.released(pctx, patch) {
			// An earlier try went through, and only its answer was lost:
			// only a push with this key's verdict deletes the claim.
			r.progress("verdict %s: an earlier push went through", patch)
			break
		}
		if errors.Is(err, ledger.ErrLostRace) || final(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w; stopped before it went through: the claim ends with its lease, or at once when this runner starts again", err)
		}
		if time.Since(cl.claim.Renewed) >= r.opts.Lease/3 {
			if rerr := r.renew(pctx, cl); errors.Is(rerr, ledger.ErrLostRace) || final(rerr) {
				return fmt.Errorf("lost the claim on %s while pushing its verdict: %w", patch, rerr)
			}
		}
		wait := r.retryWait(n)
		if time.Now().Add(wait).After(cl.claim.Expires.Add(-r.opts.Lease / 10)) {
			return fmt.Errorf("%w; gave up shortly before its lease ends, so another runner may judge it", err)
		}
		r.progress("push of the verdict on %s failed, trying again in %s: %s", patch, wait.Round(time.Millisecond), errs.ClipTo(err.Error(), 400))
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	return r.l.Adopt(pctx, tip, notes)
}

// releaseOnce is one try of the release push, bounded so that a remote
// that hangs is a failure to retry, not a stuck runner.
func (r *runner) releaseOnce(ctx context.Context, patch string, cl *held, tip, notes plumbing.Hash, e *verdict.Entry) error {
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	return r.release(ctx, patch, cl, tip, notes, e)
}

// released reports whether the remote no longer holds a claim on patch.
func (r *runner) released(ctx context.Context, patch string) bool {
	fleet, err := r.l.FetchFleet(ctx, r.opts.Remote)
	if err != nil {
		return false
	}
	_, ok := fleet.Claims[patch]
	return !ok
}

// retryWait is the n-th retry's wait: doubling from half a second, at most
// Options.RetryMax (by default a tenth of the lease, between 1 s and 10 s),
// with jitter so that runners cut off together do not come back in step.
func (r *runner) retryWait(n int) time.Duration {
	ceil := min(max(r.opts.Lease/10, time.Second), 10*time.Second)
	if r.opts.RetryMax > 0 {
		ceil = r.opts.RetryMax
	}
	d := min(500*time.Millisecond<<min(n-1, 10), ceil)
	return d/2 + rand.N(d/2+1)
}

// stop releases the claim of a verdict this runner's own stop interrupted,
// without an outcome: its lease ends now (the hook takes that from the
// claim's holder alone), with the runner's record saying it judges nothing,
// so another runner takes the proposal up at once. It tries for
// stopTimeout; a claim it could not release ends with its lease.
func (r *runner) stop(ctx context.Context, patch string, cl *held) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	c := cl.claim
	c.Renewed = time.Now().UTC()
	c.Expires = c.Renewed
	for n := 1; ; n++ {
		h, err := r.l.WriteClaim(ctx, &c, cl.commit)
		if err != nil {
			return err
		}
		ups := []ledger.RefPush{{Ref: ledger.ClaimRef(patch), Old: cl.commit, New: h}}
		rec, err := r.recordUpdate(ctx, "", c.Renewed, nil)
		if err != nil {
			return err
		}
		err = r.l.PushRefs(ctx, r.opts.Remote, append(ups, rec))
		if err == nil {
			r.record = rec.New
			r.progress("released %s without a verdict", patch)
			return nil
		}
		if errors.Is(err, ledger.ErrLostRace) {
			// The record moved (another process under this name) or the
			// claim did: release the claim alone, if it is still ours.
			return r.giveUp(ctx, patch, cl)
		}
		if final(err) {
			return err
		}
		wait := r.retryWait(n)
		if d, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(d) {
			return fmt.Errorf("cannot release the claim on %s: %w; it ends with its lease, or at once when this runner starts again", patch, err)
		}
		time.Sleep(wait)
	}
}
