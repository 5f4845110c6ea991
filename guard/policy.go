package guard

import (
	"context"
	"fmt"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
	"github.com/hone-perf/hone/worktree"
)

// Policy is what the guards enforce in one repository, read from history,
// never from a working tree: the protected base refs, whose history is
// trusted, and hone.toml at the first of them, which names the targets, the
// guarded refs and the ledger. An optimizer may edit its worktree's
// hone.toml at will; nothing here reads it.
type Policy struct {
	repo    *repo.Repo
	base    *workspace.Base
	exclude []string // the commits the base refs hold now
}

// Load reads the policy of the repository r (a working tree's or a
// server's bare one).
func Load(ctx context.Context, r *repo.Repo) (*Policy, error) {
	b, err := workspace.ProtectedBase(ctx, r)
	if err != nil {
		return nil, err
	}
	p := &Policy{repo: r, base: b}
	for _, ref := range b.Refs {
		if c, err := r.ResolveCommit(ctx, ref); err == nil {
			p.exclude = append(p.exclude, c)
		}
	}
	return p, nil
}

// Bootstrap reports whether updates only create the default branch of a
// repository that has none yet: the first push to an empty server, which
// brings the hone.toml every later push is judged by.
func Bootstrap(r *repo.Repo, updates []RefUpdate) bool {
	head, ok, err := r.DefaultBranch()
	if err != nil || !ok {
		return false
	}
	if _, exists, err := r.Refs().Read(head); err != nil || exists {
		return false
	}
	for _, u := range updates {
		if u.Ref != head {
			return false
		}
	}
	return len(updates) > 0
}

// Dir is where git runs for the repository.
func (p *Policy) Dir() string { return p.repo.Dir() }

// Base is the protected base the rules were read from.
func (p *Policy) Base() *workspace.Base { return p.base }

// target returns the named target as the protected base defines it.
func (p *Policy) target(name string) (*workspace.Target, error) {
	t, ok := p.base.Config.Targets[name]
	if !ok {
		return nil, errs.NotFoundf("target %q is not defined by %s at the protected base %s", name, workspace.FileName, p.base.Ref)
	}
	return t, nil
}

// Target is target name as the protected base defines it: the allowlist the
// guards hold its commits to.
func (p *Policy) Target(name string) (*workspace.Target, error) { return p.target(name) }

// CheckNew checks, against target t's allowlist, every commit reachable from
// tip that the protected base refs (and the commits in also) do not hold,
// whether or not the repository has seen it before: a commit first pushed
// to an unguarded ref is checked like any other.
func (p *Policy) CheckNew(ctx context.Context, t *workspace.Target, tip string, also ...string) ([]Violation, error) {
	revs := []string{tip, "--not"}
	revs = append(revs, p.exclude...)
	for _, c := range also {
		if c != "" {
			revs = append(revs, c)
		}
	}
	return Commits(ctx, p.repo.Dir(), t.Rules(), revs...)
}

// class is what a ref is to the guards.
type class int

const (
	unguarded  class = iota
	agentRef         // matches a [guard] refs pattern: the target is in the name
	sessionRef       // refs/heads/worktree-<name>: the target is in the binding
	ledgerRef        // the ledger branch
	notesRef         // the notes ref
	patchRef         // refs/hone/patches/<id>
	bindingRef       // refs/hone/worktrees/<name>
)

// classify says how ref is guarded, and the target or name it carries.
func (p *Policy) classify(ref string) (class, string) {
	c := p.base.Config
	switch {
	case ref == "refs/heads/"+c.Ledger.Branch:
		return ledgerRef, ""
	case ref == c.Ledger.NotesRef:
		return notesRef, ""
	case strings.HasPrefix(ref, ledger.PatchRefPrefix):
		return patchRef, strings.TrimPrefix(ref, ledger.PatchRefPrefix)
	case strings.HasPrefix(ref, worktree.BindingPrefix):
		return bindingRef, strings.TrimPrefix(ref, worktree.BindingPrefix)
	}
	if name, ok := TargetOf(c.Guard.Refs, ref); ok {
		return agentRef, name
	}
	if name, ok := worktree.BranchWorktree(ref); ok {
		return sessionRef, name
	}
	return unguarded, ""
}

// Patterns are the refs a local reference-transaction hook hands to hone,
// as shell case patterns: everything the policy guards. Any other ref is
// updated without hone, so git keeps working when hone is missing.
func (p *Policy) Patterns() []string {
	c := p.base.Config
	return append(p.PushPatterns(), "refs/heads/"+worktree.BranchPrefix+"*", "refs/heads/"+c.Ledger.Branch, c.Ledger.NotesRef,
		ledger.PatchRefPrefix+"*", worktree.BindingPrefix+"*")
}

// PushPatterns are the guarded refs a push may target: the [guard] refs
// patterns, "<target>" as "*".
func (p *Policy) PushPatterns() []string {
	var out []string
	for _, pat := range p.base.Config.Guard.Refs {
		out = append(out, strings.ReplaceAll(pat, "<target>", "*"))
	}
	return out
}

// checkAgentRef checks the commits a ref named for target name would hold.
func (p *Policy) checkAgentRef(ctx context.Context, ref, name, tip string) ([]Violation, error) {
	t, err := p.target(name)
	if err != nil {
		return []Violation{{Ref: ref, Rule: fmt.Sprintf("the ref names target %q, which %s at the protected base does not define", name, workspace.FileName)}}, nil
	}
	return withRef(ref)(p.CheckNew(ctx, t, tip))
}

// checkSession checks the commits the branch (or worktree) of a managed
// worktree would hold against its binding: since the worktree's base, only
// changes inside the bound target. Without a binding it is refused.
func (p *Policy) checkSession(ctx context.Context, ref, name, tip string) ([]Violation, error) {
	b, err := worktree.Bound(p.repo, name)
	if err != nil {
		return []Violation{{Ref: ref, Rule: strings.TrimPrefix(err.Error(), "refused: ")}}, nil
	}
	if b.Target == "" {
		return nil, nil
	}
	t, err := p.target(b.Target)
	if err != nil {
		return []Violation{{Ref: ref, Rule: fmt.Sprintf("worktree %s is bound to target %q, which %s at the protected base does not define", name, b.Target, workspace.FileName)}}, nil
	}
	return withRef(ref)(p.CheckNew(ctx, t, tip, b.BaseCommit))
}

// withRef names ref in every violation.
func withRef(ref string) func([]Violation, error) ([]Violation, error) {
	return func(vs []Violation, err error) ([]Violation, error) {
		for i := range vs {
			vs[i].Ref = ref
		}
		return vs, err
	}
}

func isZero(h string) bool { return strings.Trim(h, "0") == "" }
