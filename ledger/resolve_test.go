package ledger_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
)

// Ids may be abbreviated as git's are: a unique prefix of at least four
// characters names one entry or patch; an ambiguous one names the
// candidates; a shorter one is a usage error.
func TestIdPrefixesResolveLikeGits(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "a1b2c3d4e5f60001")
	appendOK(t, l, &p)
	q := makePatch(t, dir, "a1b2c3d4e5f60002")
	appendOK(t, l, &q)
	v := verdictFor(p, ledger.VerdictAccepted, "faster")
	v.Speedup = 2.5
	appendOK(t, l, v)

	for _, tc := range []struct {
		resolve func(context.Context, string) (string, error)
		in      string
		want    string
		code    errs.Code
	}{
		{l.ResolvePatch, "a1b2c3d4e5f60001", "a1b2c3d4e5f60001", 0},
		{l.ResolvePatch, "a1b2c3d4e5f60002", "a1b2c3d4e5f60002", 0},
		{l.ResolvePatch, "A1B2C3D4E5F6000", "", errs.Invalid},
		{l.ResolvePatch, "a1b2c3d4e5f6000", "", errs.Invalid},
		{l.ResolvePatch, "a1b", "", errs.Usage},
		{l.ResolvePatch, "ffff", "", errs.NotFound},
		{l.ResolveEntry, p.ID, p.ID, 0},
		{l.ResolveEntry, v.ID[:len(v.ID)-1], v.ID, 0},
		{l.ResolveEntry, strings.ToUpper(q.ID), q.ID, 0},
		{l.ResolveEntry, commonPrefix(p.ID, v.ID), "", errs.Invalid},
		{l.ResolveEntry, p.ID[:3], "", errs.Usage},
		{l.ResolveEntry, "ffffffff", "", errs.NotFound},
		{l.ResolveEntry, "zz/.*", "", errs.NotFound},
	} {
		got, err := tc.resolve(ctx, tc.in)
		if got != tc.want || errs.CodeOf(err) != tc.code {
			t.Errorf("resolve %q = %q, %v; want %q with code %d", tc.in, got, err, tc.want, tc.code)
		}
	}
	_, err := l.ResolvePatch(ctx, "a1b2")
	if msg := err.Error(); !strings.Contains(msg, "a1b2c3d4e5f60001, a1b2c3d4e5f60002") {
		t.Errorf("an ambiguous prefix must list the candidates: %s", msg)
	}
	s, err := l.Get(ctx, v.ID[:8]+v.ID[8:20])
	if err != nil || s.ID != v.ID {
		t.Fatalf("Get by prefix = %v, %v", s, err)
	}
	rows, err := l.Rows(ctx, ledger.Filter{Kind: ledger.KindProposal})
	if err != nil || len(rows) != 2 || rows[0].Speedup != 2.5 || rows[0].Pin == "" || rows[1].Speedup != 0 {
		t.Fatalf("Rows = %+v, %v; want the proposals with their pin and the verdict's speedup", rows, err)
	}
}

func commonPrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n < ledger.MinPrefix {
		n = ledger.MinPrefix // ids of one test share their first hex digits of time
	}
	return a[:n]
}
