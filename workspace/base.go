package workspace

import (
	"context"
	"sort"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
)

// Base is the protected base of a repository: the refs whose history is
// trusted, and hone.toml as the first of them holds it. Guards take their
// rules, and the ledger its allowed signers, from here and never from a
// working tree, which an optimizer with a shell may edit.
type Base struct {
	// Refs are full ref names, or, for a pin that names a tag or a commit,
	// that fixed commit: nothing moves it, so its history is trusted as is.
	Refs []string
	// Ref is the member of Refs that Committed was read from.
	Ref string
	*Committed
}

// ProtectedBase resolves the protected base. Which refs are protected is
// read from hone.toml on the repository's default branch (the main
// worktree's HEAD, a server's HEAD): [guard] base when set, else the branch
// each target's pin names (a pin naming a tag or a commit protects that
// commit). The rules are then read from hone.toml at the first of those refs
// that exists. A repository whose default branch has no hone.toml is a
// NotFound error.
func ProtectedBase(ctx context.Context, r *repo.Repo) (*Base, error) {
	head, ok, err := r.DefaultBranch()
	if err != nil {
		return nil, err
	}
	if !ok {
		head = "HEAD"
	}
	boot, err := LoadAt(ctx, r, head)
	if err != nil {
		return nil, err
	}
	refs := boot.Config.Guard.Base
	if len(refs) == 0 {
		refs = pinBases(ctx, r, boot.Config, head)
	}
	for _, ref := range refs {
		c, err := LoadAt(ctx, r, ref)
		if errs.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Base{Refs: refs, Ref: ref, Committed: c}, nil
	}
	return nil, errs.NotFoundf("no protected base ref (%s) holds a %s; create it, or set [guard] base in %s on %s", strings.Join(refs, ", "), FileName, FileName, head)
}

// pinBases is the default protected base: the branch each target's pin
// names (see ResolvePinRef), in target order, or the default branch when no
// target names one.
func pinBases(ctx context.Context, r *repo.Repo, c *Config, head string) []string {
	names := make([]string, 0, len(c.Targets))
	for n := range c.Targets {
		names = append(names, n)
	}
	sort.Strings(names)
	var refs []string
	seen := map[string]bool{}
	add := func(ref string) {
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	for _, n := range names {
		// A branch pin protects the branch; a tag or a commit is a fixed
		// point. An ambiguous pin protects nothing: Judge refuses it.
		ref, commit, err := ResolvePinRef(ctx, r, c.Targets[n].Pin)
		switch {
		case err != nil:
		case strings.HasPrefix(ref, "refs/heads/"):
			add(ref)
		default:
			add(commit)
		}
	}
	if len(refs) == 0 {
		refs = []string{head}
	}
	return refs
}

func refExists(r *repo.Repo, ref string) bool {
	_, ok, err := r.Refs().Read(ref)
	return ok && err == nil
}
