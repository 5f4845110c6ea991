package runner

import (
	"context"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
)

// An idle runner polls. A full round (fetch the claims, pull and fold the
// ledger, read the queue) costs what the ledger's history costs, and with
// several runners polling every few seconds the remote and the runners'
// machines pay it all day for nothing. What a round decides depends only on
// the remote's ledger branch, notes, inboxes and claims, and on time only
// through the leases of the claims it saw: so after a round that found
// nothing to claim, the next one first lists those refs (one round trip,
// no objects) and goes on only if one of them moved or a lease it saw has
// ended since.

// quiet is what a round that found nothing to claim saw.
type quiet struct {
	refs  string    // the remote's refs a round depends on, as ls-remote lists them
	until time.Time // the first lease it saw end, after which a claim may be taken over
}

// remoteRefs lists, by name and value, the remote's refs a round's decision
// depends on. Runners' records are left out: they move with every heartbeat
// and decide nothing.
func (r *runner) remoteRefs(ctx context.Context) (string, error) {
	out, err := git.Run(ctx, git.Cmd{Dir: r.ws.Root, Args: []string{"ls-remote", "--refs", r.opts.Remote,
		"refs/heads/" + r.ws.Config.Ledger.Branch, r.ws.Config.Ledger.NotesRef, ledger.InboxRefPrefix + "*", ledger.ClaimRefPrefix + "*"}})
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot list the refs of remote %q", r.opts.Remote)
	}
	return string(out), nil
}

// unchanged reports whether the remote is as the last round that found
// nothing to claim saw it, so that this round would find nothing either.
// refs is the listing to keep if this round finds nothing.
func (r *runner) unchanged(ctx context.Context) (refs string, same bool, err error) {
	refs, err = r.remoteRefs(ctx)
	if err != nil {
		return "", false, err
	}
	same = r.quiet != nil && refs == r.quiet.refs && time.Now().Before(r.quiet.until)
	if !same {
		r.quiet = nil
	}
	return refs, same, nil
}

// quietAtMost bounds how long rounds are skipped on an unchanged remote: a
// full round now and then, whatever this reasoning missed.
const quietAtMost = 5 * time.Minute

// rest records that a round saw refs and found nothing to claim, given the
// claims it saw.
func (r *runner) rest(refs string, fleet *ledger.Fleet) {
	q := &quiet{refs: refs, until: time.Now().Add(quietAtMost)}
	now := time.Now()
	for _, c := range fleet.Claims {
		if c.Live(now) && c.Expires.Before(q.until) {
			q.until = c.Expires
		}
	}
	r.quiet = q
}
