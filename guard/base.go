package guard

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/signing"
	"github.com/hone-perf/hone/workspace"
)

// BaseRefs are the refs whose content judges every push: the protected
// base refs (full ref names; a pin naming a tag or commit is a fixed
// commit, not a ref) and the default branch, whose hone.toml says which
// refs the base is.
func (p *Policy) BaseRefs() []string {
	var out []string
	seen := map[string]bool{}
	add := func(ref string) {
		if strings.HasPrefix(ref, "refs/") && !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
	}
	if head, ok, err := p.repo.DefaultBranch(); err == nil && ok {
		add(head)
	}
	for _, ref := range p.base.Refs {
		add(ref)
	}
	return out
}

// judges reports whether a change of path p on the base changes what
// judges pushes: hone.toml, the allowed signers, the maintainers file, or
// a path a target protects.
func (p *Policy) judges(path string) bool {
	c := p.base.Config
	if path == workspace.FileName || path == c.Ledger.AllowedSigners || path == c.Guard.Maintainers {
		return true
	}
	for _, t := range c.Targets {
		r := t.Rules()
		rel, ok := r.Rel(path)
		if !ok {
			continue
		}
		for _, pat := range r.Protect {
			if allowlist.Protected(pat, rel) {
				return true
			}
		}
	}
	return false
}

// checkBaseRefs guards the protected base itself: it is never deleted, and
// a commit that changes what judges pushes must be signed by a key the
// [guard] maintainers file lists as the ref was before the push. Without
// that file no such change is let through: the forge's branch protection
// must then cover the base.
func checkBaseRefs(ctx context.Context, rc *Receive) ([]Violation, error) {
	guarded := map[string]bool{}
	for _, ref := range rc.BaseRefs() {
		guarded[ref] = true
	}
	var vs []Violation
	for _, u := range rc.Updates {
		if !guarded[u.Ref] {
			continue
		}
		if isZero(u.New) {
			vs = append(vs, Violation{Ref: u.Ref, Rule: "the protected base is never deleted through this server; its history is what every verdict is judged by"})
			continue
		}
		from := u.Old
		revs := []string{u.New, "--not", u.Old}
		if isZero(u.Old) {
			from = rc.base.Commit
			revs = append([]string{u.New, "--not"}, rc.exclude...)
		}
		maintainers, err := rc.maintainers(ctx, from)
		if err != nil {
			return nil, err
		}
		refused := map[string]bool{}
		err = eachChange(ctx, rc.Dir(), revs, func(commit, parent string, changes []git.Change) {
			if refused[commit] {
				return
			}
			for _, c := range changes {
				if !rc.judges(c.Path) {
					continue
				}
				if why := maintainers.refuses(ctx, rc.Dir(), commit); why != "" {
					refused[commit] = true
					vs = append(vs, Violation{Ref: u.Ref, Commit: commit, Parent: parent, Path: c.Path, Rule: why})
				}
				return
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// maintainerKeys are the keys whose signed commits may change what judges
// pushes, as a base commit lists them.
type maintainerKeys struct {
	file    string // "<short commit>:<path>", or "" when none are configured
	signers *signing.Signers
}

// maintainers reads the [guard] maintainers file at commit.
func (p *Policy) maintainers(ctx context.Context, commit string) (*maintainerKeys, error) {
	name := p.base.Config.Guard.Maintainers
	if name == "" {
		return &maintainerKeys{}, nil
	}
	at := git.Short(commit) + ":" + name
	raw, err := git.Run(ctx, git.Cmd{Dir: p.Dir(), Args: []string{"cat-file", "blob", commit + ":" + name}})
	if err != nil {
		return &maintainerKeys{file: at}, nil
	}
	s, err := signing.ParseSigners(at, raw)
	if err != nil {
		return nil, err
	}
	return &maintainerKeys{file: at, signers: s}, nil
}

// refuses says why commit may not change what judges pushes, or "".
func (m *maintainerKeys) refuses(ctx context.Context, dir, commit string) string {
	const protect = "; a change of what judges pushes (hone.toml, allowed signers, maintainers, protected paths) must be signed by a maintainer, or the forge's branch protection must cover this ref"
	if m.signers == nil {
		if m.file == "" {
			return "[guard] maintainers is not set at the protected base, so this server lets nobody change it" + protect
		}
		return fmt.Sprintf("the maintainers file %s does not exist", m.file) + protect
	}
	raw, err := git.Run(ctx, git.Cmd{Dir: dir, Args: []string{"cat-file", "commit", commit}})
	if err != nil {
		return fmt.Sprintf("cannot read commit %s: %v", git.Short(commit), errs.Clip(err.Error()))
	}
	c := signing.CheckCommit(raw)
	if _, ok := m.signers.Principal(c, time.Now()); ok {
		return ""
	}
	who := "it is not signed"
	switch c.Status {
	case signing.Good:
		who = "it is signed by " + c.Fingerprint + ", which " + m.file + " does not list"
	case signing.Bad:
		who = "its signature does not verify"
	}
	return who + protect
}
