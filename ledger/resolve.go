package ledger

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// MinPrefix is the shortest abbreviation of an entry or patch id that is
// resolved, as git refuses abbreviations of fewer than four digits.
const MinPrefix = 4

// ResolveEntry returns the id of the one entry whose id starts with prefix
// (a whole id resolves to itself). It reads the index only. A prefix
// shorter than MinPrefix is a usage error, one that matches several entries
// is invalid and lists them, one that matches none is not found.
func (l *Ledger) ResolveEntry(ctx context.Context, prefix string) (string, error) {
	p, err := checkPrefix("entry", prefix)
	if err != nil {
		return "", err
	}
	want := []byte(p)
	var ids []string
	err = l.scan(ctx, func(line []byte) bool { return bytes.HasPrefix(lineID(line), want) }, func(int) { ids = nil }, func(r *row) bool {
		ids = append(ids, r.ID)
		return true
	})
	if err != nil {
		return "", err
	}
	return pick("ledger entry", prefix, ids, "hone ledger list")
}

// ResolvePatch returns the id of the one patch with a proposal in the
// ledger whose id starts with prefix, under the same rules as ResolveEntry.
func (l *Ledger) ResolvePatch(ctx context.Context, prefix string) (string, error) {
	p, err := checkPrefix("patch", prefix)
	if err != nil {
		return "", err
	}
	want, kind := []byte(p), []byte(KindProposal)
	seen := map[string]bool{}
	var ids []string
	keep := func(line []byte) bool {
		return bytes.HasPrefix(field(line, fieldPatchID), want) && bytes.Equal(pathSegment(linePath(line), 1), kind)
	}
	err = l.scan(ctx, keep, func(int) { seen, ids = map[string]bool{}, nil }, func(r *row) bool {
		if !seen[r.PatchID] {
			seen[r.PatchID] = true
			ids = append(ids, r.PatchID)
		}
		return true
	})
	if err != nil {
		return "", err
	}
	return pick("patch", prefix, ids, "hone patch list")
}

// checkPrefix lower-cases an id or prefix and refuses one that is too short
// to resolve. Ids are lowercase hex; anything else matches nothing.
func checkPrefix(what, prefix string) (string, error) {
	if len(prefix) < MinPrefix {
		return "", errs.Usagef("%s id %q is too short: give at least %d characters of it", what, prefix, MinPrefix)
	}
	return strings.ToLower(prefix), nil
}

// pick returns the one match, or says why there is not exactly one.
func pick(what, prefix string, ids []string, list string) (string, error) {
	switch len(ids) {
	case 0:
		return "", errs.NotFoundf("no %s %q; see `%s`", what, prefix, list)
	case 1:
		return ids[0], nil
	}
	slices.Sort(ids)
	shown := ids
	more := ""
	if len(shown) > 10 {
		shown, more = shown[:10], fmt.Sprintf(" and %d more", len(ids)-10)
	}
	return "", errs.Invalidf("%s id %q is ambiguous: it starts %s%s; give more characters", what, prefix, strings.Join(shown, ", "), more)
}
