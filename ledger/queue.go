package ledger

import (
	"cmp"
	"context"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/workspace"
)

// QueueOptions select the queue a runner judges from.
type QueueOptions struct {
	Target string // "": every target
	// MaxPerProposer caps how many proposals of one proposer the queue
	// holds; 0: [guard] max_queued of the protected base.
	MaxPerProposer int
	// Pushers, when set (Fleet.Pushers, where the server authenticates
	// pushers), is whom the server authenticated for each proposal, by
	// entry id: each such identity is then one proposer, whatever
	// committers or keys its proposals name, and every proposal without
	// one shares one turn, so pushing under many names buys no turns.
	Pushers map[string]string
	// Skip, when set, is called with each pending proposal the queue
	// leaves out and why: a patch commit or tree judged or queued under
	// another patch id, or a proposer over the cap (it comes back once the
	// proposer's earlier ones are judged).
	Skip func(a Attempt, reason string)
}

// Queue returns the proposals waiting for a verdict (no trusted outcome,
// none running), in the order a runner should judge them: by when they
// reached the ledger, which is their place on its first-parent history
// (the server's pre-receive keeps every push on it, so each push's
// entries follow the previous tip's; no field an agent writes counts),
// oldest first per proposer and in turns across proposers (see fairOrder),
// at most MaxPerProposer of each. A
// proposer is the key that signed the commit that first wrote the
// proposal (its append, in the proposer's clone), or that commit's
// committer when it is not signed. Each patch
// commit is queued once, whatever the number of patch ids naming it. The
// order is stable for a given ledger tip. With o.Pushers, a proposer is
// instead the identity the server authenticated for the push that brought
// the proposal, and proposals without one are one proposer.
func (l *Ledger) Queue(ctx context.Context, o QueueOptions) ([]Attempt, error) {
	if o.MaxPerProposer <= 0 {
		o.MaxPerProposer = workspace.DefaultMaxQueued
		b, err := workspace.ProtectedBase(ctx, l.ws.Repo)
		switch {
		case err == nil:
			o.MaxPerProposer = b.Config.Guard.MaxQueued
		case !errs.Is(err, errs.NotFound):
			return nil, err
		}
	}
	attempts, err := l.Attempts(ctx, Filter{Target: o.Target})
	if err != nil {
		return nil, err
	}
	arrivals, err := l.arrivals(ctx)
	if err != nil {
		return nil, err
	}
	proposer := func(id string) string {
		if o.Pushers == nil {
			return arrivals[id].proposer
		}
		if who, ok := o.Pushers[id]; ok {
			return "pusher " + who
		}
		return "an unauthenticated pusher"
	}
	skip := func(a Attempt, why string) {
		if o.Skip != nil {
			o.Skip(a, why)
		}
	}
	judged := map[string]string{} // patch commit or tree -> the patch id that holds it
	// served is, per proposer, where on the ledger its latest verdict
	// (or the started entry of one running) arrived: its last turn.
	served := map[string]int{}
	var pending []Attempt
	for _, a := range attempts {
		if a.ProposalID == "" {
			continue
		}
		if v := cmp.Or(a.Outcome(), a.Running()); v != nil {
			for _, k := range l.patchKeys(a.PatchID) {
				judged[k] = a.PatchID
			}
			who := proposer(a.ProposalID)
			if at, ok := arrivals[v.ID]; ok && at.seq > served[who] {
				served[who] = at.seq
			}
			continue
		}
		pending = append(pending, a)
	}
	sort.SliceStable(pending, func(i, j int) bool {
		return arrivals[pending[i].ProposalID].seq < arrivals[pending[j].ProposalID].seq
	})
	byProposer := map[string][]Attempt{}
	var proposers []string // in the order of their first queued proposal
pending:
	for _, a := range pending {
		keys := l.patchKeys(a.PatchID)
		for _, k := range keys {
			if other, ok := judged[k]; ok {
				skip(a, "its patch commit is also patch "+other+", judged or queued already; one commit, one verdict")
				continue pending
			}
		}
		for _, k := range keys {
			judged[k] = a.PatchID
		}
		who := proposer(a.ProposalID)
		if len(byProposer[who]) >= o.MaxPerProposer {
			skip(a, "its proposer "+who+" has as many proposals queued as [guard] max_queued allows")
			continue
		}
		if byProposer[who] == nil {
			proposers = append(proposers, who)
		}
		byProposer[who] = append(byProposer[who], a)
	}
	return fairOrder(proposers, byProposer, arrivals, served), nil
}

// fairOrder takes each proposer's proposals oldest first, and across
// proposers the one whose turn is due first: a proposer's next proposal is
// due when it arrived, but never before the proposer's last turn (its
// latest verdict) — a proposer waits for everyone who was due before that
// turn. So the order holds across runners' rounds, not only within one
// listing: a flood's oldest proposal is judged, then each proposer that
// arrived meanwhile has its turn before the flood's next. Within the
// listing, each proposal taken is a turn later than every arrival, so
// proposers that are due take turns round robin. A proposal that arrived
// in the same commit as another proposer's turn (one fold can bring a
// runner's verdict and an agent's proposal from two inboxes) is due before
// that proposer's next: the tie goes to whoever was served longer ago.
func fairOrder(proposers []string, byProposer map[string][]Attempt, arrivals map[string]arrival, served map[string]int) []Attempt {
	clock := 0
	for _, a := range arrivals {
		clock = max(clock, a.seq)
	}
	due := func(who string) int { return max(arrivals[byProposer[who][0].ProposalID].seq, served[who]) }
	var out []Attempt
	for {
		next := ""
		for _, who := range proposers {
			if len(byProposer[who]) > 0 && (next == "" || due(who) < due(next) || due(who) == due(next) && served[who] < served[next]) {
				next = who
			}
		}
		if next == "" {
			return out
		}
		out = append(out, byProposer[next][0])
		byProposer[next] = byProposer[next][1:]
		clock++
		served[next] = clock
	}
}

// patchKeys are what makes two patch ids one attempt: the commit and the
// tree their patch ref holds (none without a ref: the runner reports it).
func (l *Ledger) patchKeys(patchID string) []string {
	h, ok, err := l.refs.Read(PatchRefPrefix + patchID)
	if err != nil || !ok {
		return nil
	}
	keys := []string{"commit " + h.String()}
	if tree, err := l.obj.commitTree(h); err == nil {
		keys = append(keys, "tree "+tree.String())
	}
	return keys
}

// maker is who made commit h: the fingerprint of the key that signed it,
// or else its committer as "name <email>".
func (l *Ledger) maker(ctx context.Context, h plumbing.Hash) (string, error) {
	if s, err := l.signerOf(ctx, h); err == nil && s.Fingerprint != "" {
		return s.Fingerprint, nil
	}
	c, err := l.obj.commitInfo(h)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(c.raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "committer "); ok {
			if end := strings.LastIndexByte(rest, '>'); end >= 0 {
				return rest[:end+1], nil
			}
			return rest, nil
		}
		if line == "" {
			break
		}
	}
	return "", nil
}
