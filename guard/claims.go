package guard

import (
	"context"
	"time"

	"github.com/hone-perf/hone/ledger"
)

// checkFleetRefs judges the fleet's refs in a push (see checkFleet).
func checkFleetRefs(ctx context.Context, rc *Receive) ([]Violation, error) {
	return rc.checkFleet(ctx, rc.Server, rc.Updates, rc.Proposed)
}

// fleetNamespaces are the rows `hone hooks install --server` shows for the
// fleet's refs.
func fleetNamespaces(p *Policy) []Namespace {
	return []Namespace{
		{Refs: ledger.InboxRefPrefix + "<writer>/{ledger,notes}", Writer: inboxWriter(p),
			Checks: "the ledger branch's and the notes' rules: appends only, entries only, verdicts signed by an allowed signer; no path the branch or another inbox holds with other bytes; deleted only with its retirement"},
		{Refs: ledger.RetiredRefPrefix + "<writer>", Writer: "maintainers: a commit a [guard] maintainers key signed",
			Checks: "created once, with the deletion of the inbox it retires; never moved or deleted; that inbox is never written again"},
		{Refs: ledger.ClaimRefPrefix + "<patch-id>", Writer: "runners whose key allowed_signers lists",
			Checks: "created once by a listed key with a live lease; moved only to a child signed by the same key (heartbeat) or, after expiry, another listed key (takeover); deleted only with a verdict signed by its key"},
		{Refs: ledger.RunnerRefPrefix + "<runner>", Writer: "that runner",
			Checks: "the runner's own record, signed by a listed key"},
		{Refs: ledger.PushersRef, Writer: "this hook alone, once a push passed every check ([guard] pusher)",
			Checks: "no push writes or deletes it; it names the identity the server authenticated for each proposal, which the queue takes turns by"},
	}
}

// checkFleet is the pre-receive's check of the runner fleet's refs: the
// writers' inboxes, claims and runner records, and the rule that a verdict
// on a claimed patch comes only with the release of the claim its signer
// held (see ledger.Server.CheckFleet). The proposals the inboxes bring are
// added to proposed, for the patch refs pushed with them.
func (p *Policy) checkFleet(ctx context.Context, srv *ledger.Server, updates []RefUpdate, proposed map[string]ledger.Proposed) ([]Violation, error) {
	ups := make([]ledger.Update, len(updates))
	for i, u := range updates {
		ups[i] = ledger.Update{Ref: u.Ref, Old: hashOf(u.Old), New: hashOf(u.New)}
	}
	refused, props, err := srv.CheckFleet(ctx, ups, time.Now())
	if err != nil {
		return nil, err
	}
	for id, pr := range props {
		proposed[id] = pr
	}
	vs := make([]Violation, 0, len(refused))
	for _, r := range refused {
		vs = append(vs, Violation{Ref: r.Ref, Path: r.Path, Rule: r.Rule})
	}
	return vs, nil
}

// inboxWriter says who writes an inbox under this policy.
func inboxWriter(p *Policy) string {
	w := "its writer: a runner's inbox (its tip signed by a listed key) only by that key"
	if v := p.base.Config.Guard.Pusher; v != "" {
		return w + "; any other only by the identity the server authenticated in $" + v + " when it was first written"
	}
	return w + "; any other by anyone with push access ([guard] pusher unset)"
}
