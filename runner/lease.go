package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
)

// pushTimeout bounds one push of a heartbeat, which runs on even when the
// verdict is interrupted, so that the claim's last value is known.
const pushTimeout = 60 * time.Second

// heartbeat renews cl's lease every third of the lease until ctx ends, and
// is the one goroutine that moves cl and the runner's record meanwhile.
// When the claim is lost (another runner took it over, the hook refused the
// renewal, or renewing failed until the lease ran out) it cancels the verdict through cancel. The
// channel it returns yields, once the goroutine has ended, the loss or nil.
func (r *runner) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, cl *held) <-chan error {
	done := make(chan error, 1)
	go func() {
		t := time.NewTicker(r.opts.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-t.C:
			}
			err := r.renew(ctx, cl)
			if err == nil {
				continue
			}
			if errors.Is(err, ledger.ErrLostRace) || errs.CodeOf(err) == errs.Policy || !time.Now().Before(cl.claim.Expires) {
				lost := fmt.Errorf("lost the claim on %s: %w", cl.claim.Patch, err)
				cancel(lost)
				done <- lost
				return
			}
			r.progress("heartbeat %s failed, trying again: %v", cl.claim.Patch, err)
		}
	}()
	return done
}

// renew pushes the claim's next lease and the runner's record together.
func (r *runner) renew(ctx context.Context, cl *held) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pushTimeout)
	defer cancel()
	now := time.Now().UTC()
	next := cl.claim
	next.Renewed, next.Expires = now, now.Add(r.opts.Lease)
	h, err := r.l.WriteClaim(ctx, &next, cl.commit)
	if err != nil {
		return err
	}
	rec, err := r.recordUpdate(ctx, next.Patch, now, nil)
	if err != nil {
		return err
	}
	if err := r.l.PushRefs(ctx, r.opts.Remote, []ledger.RefPush{{Ref: ledger.ClaimRef(next.Patch), Old: cl.commit, New: h}, rec}); err != nil {
		return err
	}
	cl.commit, cl.claim, r.record, r.last.Heartbeat = h, next, rec.New, now
	r.progress("heartbeat %s (lease until %s)", next.Patch, next.Expires.Format(time.RFC3339))
	return nil
}
