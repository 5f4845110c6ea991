package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/ledger"
)

func startedFor(p testEntry) *testEntry {
	s := &testEntry{Note: "started"}
	s.Common = p.Common
	s.ID, s.Schema, s.Created = "", 0, time.Time{}
	s.Kind = ledger.KindStarted
	return s
}

func outcomeOf(t *testing.T, l *ledger.Ledger, patchID string) (*ledger.Attempt, *ledger.Judged) {
	t.Helper()
	as, err := l.Attempts(ctx, ledger.Filter{PatchID: patchID})
	if err != nil || len(as) != 1 {
		t.Fatalf("attempts %v %v", as, err)
	}
	return &as[0], as[0].Outcome()
}

// A verdict that started and never finished counts as cancelled, the
// attempt's outcome, once its judging lock is free; while a live process
// holds it, it is in progress and no outcome. A verdict recorded after the
// start finishes it.
func TestKilledVerdictCountsAsCancelled(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "k1k1k1k1k1k1k1k1")
	if _, err := l.Append(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if _, o := outcomeOf(t, l, p.PatchID); o != nil {
		t.Fatalf("a proposal alone has outcome %+v", o)
	}
	st, err := l.Append(ctx, startedFor(p))
	if err != nil {
		t.Fatal(err)
	}
	held, err := lock.Acquire(context.Background(), l.JudgingLock(p.PatchID), "judge")
	if err != nil {
		t.Fatal(err)
	}
	a, o := outcomeOf(t, l, p.PatchID)
	if o != nil || a.Running() == nil || a.Running().ID != st.ID {
		t.Fatalf("a running verdict: outcome %+v, running %+v", o, a.Running())
	}
	held.Release()
	a, o = outcomeOf(t, l, p.PatchID)
	if o == nil || o.Verdict != ledger.VerdictCancelled || o.ID != st.ID || a.Running() != nil {
		t.Fatalf("a dead verdict: outcome %+v", o)
	}
	rows, err := l.Rows(ctx, ledger.Filter{Kind: ledger.KindStarted})
	if err != nil || len(rows) != 1 || rows[0].Verdict != ledger.VerdictCancelled {
		t.Fatalf("ledger list shows the start as %+v %v", rows, err)
	}
	v, err := l.Append(ctx, verdictFor(p, ledger.VerdictRejectedBench, "slower"))
	if err != nil {
		t.Fatal(err)
	}
	if _, o = outcomeOf(t, l, p.PatchID); o == nil || o.ID != v.ID {
		t.Fatalf("after its verdict: outcome %+v", o)
	}
}

// An interrupted verdict that could still write records its own cancelled
// verdict entry, which is a verdict like any other.
func TestCancelledIsAVerdictWord(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "c1c1c1c1c1c1c1c1")
	if _, err := l.Append(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, startedFor(p)); err != nil {
		t.Fatal(err)
	}
	v, err := l.Append(ctx, verdictFor(p, ledger.VerdictCancelled, "interrupted"))
	if err != nil {
		t.Fatal(err)
	}
	if _, o := outcomeOf(t, l, p.PatchID); o == nil || o.ID != v.ID || o.Verdict != ledger.VerdictCancelled {
		t.Fatalf("outcome %+v", o)
	}
	bad := startedFor(p)
	bad.Verdict = ledger.VerdictAccepted
	if _, err := l.Append(ctx, bad); err == nil {
		t.Fatal("a started entry with a verdict word was stored")
	}
}
