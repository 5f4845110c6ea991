package guard

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
)

// Receive is one push as a server's pre-receive hook sees it, before any
// ref moves: the policy read from the protected base as it was before the
// push, the updates, and what the push does to the ledger.
type Receive struct {
	*Policy
	Updates []RefUpdate
	Server  *ledger.Server
	// LedgerTip is the ledger branch as it will be after the push.
	LedgerTip plumbing.Hash
	// LedgerOld is the ledger branch before the push (zero: none yet).
	LedgerOld plumbing.Hash
	// Proposed are the proposals the push adds, by patch id.
	Proposed map[string]ledger.Proposed

	existing map[string]ledger.Proposed
}

// Existing are the proposals on the ledger before the push, by patch id,
// read once per push.
func (rc *Receive) Existing(ctx context.Context) (map[string]ledger.Proposed, error) {
	if rc.existing == nil {
		m, err := rc.Server.Proposals(ctx, rc.LedgerOld)
		if err != nil {
			return nil, err
		}
		rc.existing = m
	}
	return rc.existing, nil
}

// A ReceiveCheck judges one namespace of refs in a push. It returns the
// violations it finds; an error stops the hook (and refuses the push).
type ReceiveCheck func(ctx context.Context, rc *Receive) ([]Violation, error)

// receiveChecks run in this order on every push, each looking only at the
// refs of its own namespace. A new ref namespace gets its rules here, and
// its rows in Namespaces. The checks that find proposals (the ledger
// branch's, the fleet's inboxes') add them to Receive.Proposed and so come
// before checkProposals and checkPatchRefs, which need every proposal the
// push brings, however it brings them.
var receiveChecks = []ReceiveCheck{
	checkAgentRefs, checkBaseRefs, checkShadowing, checkHoneRefs, checkLedgerRefs,
	checkFleetRefs,
	checkProposals, checkPatchRefs,
}

// CheckReceive checks the updates a server is receiving (pre-receive)
// with every check of receiveChecks: the guarded agent refs, the protected
// base itself, names that would shadow a pin, the ledger branch and the
// notes (appends only, only entries, notes that repeat entries, verdicts
// signed by an allowed signer), the fleet's inboxes, claims and runner
// records, one proposal per patch and one patch per commit, and patch
// refs. Everything is judged by the protected base as it was before the
// push. Pushes are checked one at a time (see lockReceive), each against
// the refs every push before it moved.
func (p *Policy) CheckReceive(ctx context.Context, updates []RefUpdate) ([]Violation, error) {
	release, err := p.lockReceive(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	// A push ahead of this one may have moved the protected base.
	fresh, err := Load(ctx, p.repo)
	if err != nil {
		return nil, err
	}
	*p = *fresh
	vs, err := p.checkReceive(ctx, updates)
	if err == nil {
		receivePause("checked")
	}
	return vs, err
}

// checkReceive is CheckReceive under the receive lock.
func (p *Policy) checkReceive(ctx context.Context, updates []RefUpdate) ([]Violation, error) {
	trust, err := ledger.LoadTrust(p.repo, p.base)
	if err != nil {
		return nil, err
	}
	cfg := p.base.Config
	pushers, err := p.pushers(ctx)
	if err != nil {
		return nil, err
	}
	srv := &ledger.Server{Dir: p.repo.Dir(), Branch: "refs/heads/" + cfg.Ledger.Branch, NotesRef: cfg.Ledger.NotesRef, Trust: trust, Pushers: pushers, Repository: cfg.Runner.Repository}
	if err := srv.Open(ctx); err != nil {
		return nil, err
	}
	defer srv.Close()
	rc := &Receive{Policy: p, Updates: updates, Server: srv, Proposed: map[string]ledger.Proposed{}}
	retiring, vs, err := rc.retirements(ctx)
	if err != nil {
		return nil, err
	}
	srv.Retiring = retiring
	if h, ok, err := p.repo.Refs().Read(srv.Branch); err == nil && ok {
		rc.LedgerOld, rc.LedgerTip = h, h
	}
	for _, u := range updates {
		if c, _ := p.classify(u.Ref); c == ledgerRef {
			rc.LedgerTip = hashOf(u.New)
		}
	}
	for _, check := range receiveChecks {
		found, err := check(ctx, rc)
		if err != nil {
			return nil, err
		}
		vs = append(vs, found...)
	}
	return vs, nil
}

func checkAgentRefs(ctx context.Context, rc *Receive) ([]Violation, error) {
	return rc.CheckPush(ctx, rc.Updates)
}

// checkLedgerRefs holds the ledger branch and the notes to appends of
// well-formed, signed entries and of note lines those entries back.
func checkLedgerRefs(ctx context.Context, rc *Receive) ([]Violation, error) {
	var refused []ledger.Refusal
	for _, u := range rc.Updates {
		old, new := hashOf(u.Old), hashOf(u.New)
		switch c, _ := rc.classify(u.Ref); c {
		case ledgerRef:
			rs, props, err := rc.Server.CheckBranch(ctx, old, new)
			if err != nil {
				return nil, err
			}
			refused = append(refused, rs...)
			for id, pr := range props {
				rc.Proposed[id] = pr
			}
		case notesRef:
			rs, err := rc.Server.CheckNotes(ctx, old, new)
			if err != nil {
				return nil, err
			}
			refused = append(refused, rs...)
			if len(rs) == 0 {
				if rs, err = rc.Server.CheckNoteLines(ctx, old, new, rc.LedgerTip); err != nil {
					return nil, err
				}
				refused = append(refused, rs...)
			}
		}
	}
	var vs []Violation
	for _, r := range refused {
		vs = append(vs, Violation{Ref: r.Ref, Path: r.Path, Rule: r.Rule})
	}
	return vs, nil
}

func checkPatchRefs(ctx context.Context, rc *Receive) ([]Violation, error) {
	var vs []Violation
	for _, u := range rc.Updates {
		if c, id := rc.classify(u.Ref); c == patchRef {
			found, err := rc.checkPatchRef(ctx, u, id)
			if err != nil {
				return nil, err
			}
			vs = append(vs, found...)
		}
	}
	return vs, nil
}

// checkPatchRef judges a pushed refs/hone/patches/<id>: created once and
// never moved or deleted, a commit with one parent, the commit and pin its
// proposal names, and a diff against the pin inside that proposal's target
// as the protected base defines it.
func (rc *Receive) checkPatchRef(ctx context.Context, u RefUpdate, id string) ([]Violation, error) {
	refuse := func(format string, args ...any) ([]Violation, error) {
		return []Violation{{Ref: u.Ref, Rule: fmt.Sprintf(format, args...)}}, nil
	}
	switch {
	case isZero(u.New):
		return refuse("a patch ref is never deleted: the ledger's entries name it")
	case !isZero(u.Old) && u.Old != u.New:
		return refuse("a patch ref never moves: its id is derived from its content")
	}
	parents, err := git.Output(ctx, rc.Dir(), "rev-list", "--parents", "-n", "1", "--end-of-options", u.New+"^{commit}")
	if err != nil {
		return refuse("%s is not a commit", git.Short(u.New))
	}
	ids := strings.Fields(parents)
	if len(ids) != 2 {
		return refuse("commit %s has %d parents; a patch commit has one, the pin", git.Short(u.New), len(ids)-1)
	}
	prop, ok := rc.Proposed[id]
	if !ok {
		existing, err := rc.Existing(ctx)
		if err != nil {
			return nil, err
		}
		if prop, ok = existing[id]; !ok {
			return refuse("no proposal on the ledger names patch %s; push the ledger with it (hone ledger push does)", id)
		}
	}
	switch {
	case prop.Commit != "" && prop.Commit != ids[0]:
		return refuse("the proposal of patch %s names commit %s, not %s", id, git.Short(prop.Commit), git.Short(ids[0]))
	case prop.Pin != "" && prop.Pin != ids[1]:
		return refuse("commit %s's parent is %s, not the pin %s its proposal names", git.Short(ids[0]), git.Short(ids[1]), git.Short(prop.Pin))
	}
	t, err := rc.target(prop.Target)
	if err != nil {
		return refuse("the proposal of patch %s names target %q, which hone.toml at the protected base does not define", id, prop.Target)
	}
	return withRef(u.Ref)(Commits(ctx, rc.Dir(), t.Rules(), ids[0], "--not", ids[1]))
}
