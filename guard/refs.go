package guard

import (
	"context"
	"strings"

	"github.com/hone-perf/hone/internal/repo"
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

func hashOf(s string) repo.Hash {
	if isZero(s) || !repo.IsHash(s) {
		return repo.ZeroHash
	}
	return repo.NewHash(s)
}
