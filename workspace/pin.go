package workspace

import (
	"context"
	"errors"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
)

// ResolvePinRef resolves a pin as hone.toml writes it to a full ref name
// (refs/heads/main, refs/tags/v1) or, for a pin naming a commit, that
// commit's 40-hex id, and the commit it names now. Only branches, tags and
// commits count, so no ref an agent may create elsewhere (a remote-tracking
// ref, a note) can stand in for a pin. "HEAD", the default, is the
// repository's default branch (the main worktree's or a server's HEAD),
// never a linked worktree's own HEAD.
//
// A short name that more than one of these would answer (a branch and a tag
// both called v1, a branch named like a commit id) is an Invalid error: an
// agent could create the other one. A pin naming nothing is ErrNoCommit.
func ResolvePinRef(ctx context.Context, r *repo.Repo, pin string) (ref, commit string, err error) {
	if pin == "HEAD" {
		head, ok, err := r.DefaultBranch()
		if err != nil {
			return "", "", err
		}
		if ok {
			pin = head
		}
	}
	var found []string
	if strings.HasPrefix(pin, "refs/") {
		if refExists(r, pin) {
			found = append(found, pin)
		}
	} else {
		for _, prefix := range []string{"refs/heads/", "refs/tags/"} {
			if refExists(r, prefix+pin) {
				found = append(found, prefix+pin)
			}
		}
		if isHex(pin) {
			if c, err := r.ResolveCommit(ctx, pin); err == nil {
				found = append(found, c)
			} else if !errors.Is(err, repo.ErrNoCommit) {
				return "", "", err
			}
		}
	}
	switch len(found) {
	case 0:
		return "", "", repo.ErrNoCommit
	case 1:
	default:
		return "", "", errs.Invalidf("pin %q is ambiguous: %s all answer to it; write the full ref name (refs/heads/..., refs/tags/...) or the 40-hex commit in %s, and remove the ref that shadows it", pin, strings.Join(found, ", "), FileName)
	}
	commit, err = r.ResolveCommit(ctx, found[0])
	if err != nil {
		return "", "", err
	}
	return found[0], commit, nil
}

// isHex reports whether s could abbreviate a commit id.
func isHex(s string) bool {
	if len(s) < 4 || len(s) > 40 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
