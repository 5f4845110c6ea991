package guard

import (
	"context"
	"fmt"
	"strings"
)

// shortPrefixes are where git looks for a short name, in its own order
// (git rev-parse's "refs/%s", "refs/tags/%s", ...): a name two of them
// hold resolves to whichever comes first, so a new one can shadow a pin.
var shortPrefixes = []string{"refs/", "refs/tags/", "refs/heads/", "refs/remotes/"}

// shortName is the name by which git would find ref, and whether ref is
// one git resolves short names to.
func shortName(ref string) (string, bool) {
	for _, p := range []string{"refs/tags/", "refs/heads/", "refs/remotes/"} {
		if rest, ok := strings.CutPrefix(ref, p); ok {
			return rest, true
		}
	}
	return "", false
}

// looksLikeCommit reports whether name could be read as an abbreviated
// commit id: git prefers a ref of that name, so it would shadow one.
func looksLikeCommit(name string) bool {
	return len(name) >= 4 && len(name) <= 64 && strings.Trim(name, "0123456789abcdefABCDEF") == ""
}

// checkShadowing refuses a new branch or tag whose name could change what
// a pin or a protected base names: a name another ref already answers to
// (a branch v1 beside the tag v1), a name spelled like a commit id, and a
// branch named as a pin that is not a full ref name.
func checkShadowing(ctx context.Context, rc *Receive) ([]Violation, error) {
	pins := map[string]string{}
	for name, t := range rc.base.Config.Targets {
		if !strings.HasPrefix(t.Pin, "refs/") {
			pins[t.Pin] = name
		}
	}
	created := map[string]bool{}
	for _, u := range rc.Updates {
		if isZero(u.Old) && !isZero(u.New) {
			created[u.Ref] = true
		}
	}
	var vs []Violation
	refs := rc.repo.Refs()
	for _, u := range rc.Updates {
		if !created[u.Ref] {
			continue
		}
		short, ok := shortName(u.Ref)
		if !ok {
			continue
		}
		refuse := func(format string, args ...any) {
			vs = append(vs, Violation{Ref: u.Ref, Rule: fmt.Sprintf(format, args...) + "; pick another name"})
		}
		if looksLikeCommit(short) {
			refuse("%q is spelled like a commit id, and a ref of that name would stand for a commit anyone may name", short)
			continue
		}
		if target, ok := pins[short]; ok && strings.HasPrefix(u.Ref, "refs/heads/") {
			refuse("target %s is pinned to %q, and a branch of that name would be what the pin names", target, short)
			continue
		}
		for _, p := range shortPrefixes {
			other := p + short
			if other == u.Ref {
				continue
			}
			_, exists, err := refs.Read(other)
			if err != nil {
				return nil, err
			}
			if exists || created[other] {
				refuse("%q would also name %s, so it would resolve ambiguously", short, other)
				break
			}
		}
	}
	return vs, nil
}
