package guard

import (
	"context"
	"time"

	"github.com/hone-perf/hone/ledger"
)

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
