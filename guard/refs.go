package guard

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
)

// CheckPush checks the updates a push is about to make on a remote (pre-push):
// every commit a guarded ref would hold and the protected base does not is
// checked, against the target named in the ref.
func (p *Policy) CheckPush(ctx context.Context, updates []RefUpdate) ([]Violation, error) {
	var vs []Violation
	for _, u := range updates {
		if isZero(u.New) {
			continue
		}
		if c, name := p.classify(u.Ref); c == agentRef {
			found, err := p.checkAgentRef(ctx, u.Ref, name, u.New)
			if err != nil {
				return nil, err
			}
			vs = append(vs, found...)
		}
	}
	return vs, nil
}

// CheckTransaction checks the updates of one local ref transaction (git's
// reference-transaction hook, in its prepared state), whatever made it:
// commit, merge, cherry-pick, rebase, reset, update-ref, with or without
// --no-verify. fromWorktree names the managed worktree the transaction runs
// in, if any: every branch updated from there is held to its binding. An
// update that deletes a ref or leaves it as it is (git gc packing refs) is
// let through: it brings nothing in. hone's own refs are refused outright:
// hone moves them itself, never through git.
func (p *Policy) CheckTransaction(ctx context.Context, updates []RefUpdate, fromWorktree string) ([]Violation, error) {
	var vs []Violation
	refs := p.repo.Refs()
	for _, u := range updates {
		if isZero(u.New) {
			continue
		}
		cur, _, err := refs.Read(u.Ref)
		if err != nil {
			return nil, err
		}
		if cur.String() == u.New {
			continue
		}
		var found []Violation
		switch c, name := p.classify(u.Ref); {
		case c == ledgerRef || c == notesRef || c == patchRef || c == bindingRef:
			found = []Violation{{Ref: u.Ref, Rule: "only hone moves this ref, and never through git; use hone's commands (hone ledger pull, hone patch propose, hone worktree enter)"}}
		case c == agentRef:
			found, err = p.checkAgentRef(ctx, u.Ref, name, u.New)
		case c == sessionRef:
			found, err = p.checkSession(ctx, u.Ref, name, u.New)
		case fromWorktree != "" && strings.HasPrefix(u.Ref, "refs/heads/"):
			found, err = p.checkSession(ctx, u.Ref, fromWorktree, u.New)
		}
		if err != nil {
			return nil, err
		}
		vs = append(vs, found...)
	}
	return vs, nil
}

// CheckReceive checks the updates a server is receiving (pre-receive): the
// guarded refs as CheckPush does, and hone's own refs. The ledger branch and
// the notes may only be appended to; with allowed signers configured at the
// protected base, every verdict a push adds must be signed by one. A patch
// ref is created once and never moved or deleted, and must hold a patch
// commit: one parent, the pin of the proposal that names the patch id (in
// the same push, or already on the ledger), a diff against it inside that
// proposal's target, as the protected base defines it.
func (p *Policy) CheckReceive(ctx context.Context, updates []RefUpdate) ([]Violation, error) {
	vs, err := p.CheckPush(ctx, updates)
	if err != nil {
		return nil, err
	}
	trust, err := ledger.LoadTrust(p.repo, p.base)
	if err != nil {
		return nil, err
	}
	cfg := p.base.Config
	srv := &ledger.Server{Dir: p.repo.Dir(), Branch: "refs/heads/" + cfg.Ledger.Branch, NotesRef: cfg.Ledger.NotesRef, Trust: trust}
	if err := srv.Open(ctx); err != nil {
		return nil, err
	}
	defer srv.Close()
	proposed := map[string]ledger.Proposed{}
	ledgerTip := plumbing.ZeroHash
	if h, ok, err := p.repo.Refs().Read(srv.Branch); err == nil && ok {
		ledgerTip = h
	}
	var refused []ledger.Refusal
	for _, u := range updates {
		old, new := hashOf(u.Old), hashOf(u.New)
		switch c, _ := p.classify(u.Ref); c {
		case ledgerRef:
			rs, props, err := srv.CheckBranch(ctx, old, new)
			if err != nil {
				return nil, err
			}
			refused = append(refused, rs...)
			for id, pr := range props {
				proposed[id] = pr
			}
			if !new.IsZero() {
				ledgerTip = new
			}
		case notesRef:
			rs, err := srv.CheckNotes(ctx, old, new)
			if err != nil {
				return nil, err
			}
			refused = append(refused, rs...)
		}
	}
	for _, r := range refused {
		vs = append(vs, Violation{Ref: r.Ref, Path: r.Path, Rule: r.Rule})
	}
	fleet, err := p.checkFleet(ctx, srv, updates, proposed)
	if err != nil {
		return nil, err
	}
	vs = append(vs, fleet...)
	for _, u := range updates {
		if c, id := p.classify(u.Ref); c == patchRef {
			found, err := p.checkPatchRef(ctx, srv, u, id, proposed, ledgerTip)
			if err != nil {
				return nil, err
			}
			vs = append(vs, found...)
		}
	}
	return vs, nil
}

func hashOf(s string) plumbing.Hash {
	if isZero(s) || !plumbing.IsHash(s) {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(s)
}

// checkPatchRef judges a pushed refs/hone/patches/<id>.
func (p *Policy) checkPatchRef(ctx context.Context, srv *ledger.Server, u RefUpdate, id string, proposed map[string]ledger.Proposed, ledgerTip plumbing.Hash) ([]Violation, error) {
	refuse := func(format string, args ...any) ([]Violation, error) {
		return []Violation{{Ref: u.Ref, Rule: fmt.Sprintf(format, args...)}}, nil
	}
	switch {
	case isZero(u.New):
		return refuse("a patch ref is never deleted: the ledger's entries name it")
	case !isZero(u.Old) && u.Old != u.New:
		return refuse("a patch ref never moves: its id is derived from its content")
	}
	parents, err := git.Output(ctx, p.repo.Dir(), "rev-list", "--parents", "-n", "1", "--end-of-options", u.New+"^{commit}")
	if err != nil {
		return refuse("%s is not a commit", git.Short(u.New))
	}
	ids := strings.Fields(parents)
	if len(ids) != 2 {
		return refuse("commit %s has %d parents; a patch commit has one, the pin", git.Short(u.New), len(ids)-1)
	}
	prop, ok := proposed[id]
	if !ok {
		found, err := srv.FindProposal(ctx, ledgerTip, id)
		if err != nil {
			return nil, err
		}
		if found == nil {
			return refuse("no proposal on the ledger names patch %s; push the ledger with it (hone ledger push does)", id)
		}
		prop = *found
	}
	switch {
	case prop.Commit != "" && prop.Commit != ids[0]:
		return refuse("the proposal of patch %s names commit %s, not %s", id, git.Short(prop.Commit), git.Short(ids[0]))
	case prop.Pin != "" && prop.Pin != ids[1]:
		return refuse("commit %s's parent is %s, not the pin %s its proposal names", git.Short(ids[0]), git.Short(ids[1]), git.Short(prop.Pin))
	}
	t, err := p.target(prop.Target)
	if err != nil {
		return refuse("the proposal of patch %s names target %q, which hone.toml at the protected base does not define", id, prop.Target)
	}
	return withRef(u.Ref)(Commits(ctx, p.repo.Dir(), t.Rules(), ids[0], "--not", ids[1]))
}
