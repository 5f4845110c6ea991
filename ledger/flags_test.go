package ledger_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// oldVerdict is a verdict as hone wrote it before flags existed: the facts
// in their own fields, none in Flags.
type oldVerdict struct {
	testEntry
	PinUnprotected bool `toml:"pin_unprotected,omitempty"`
	Environment    struct {
		Isolation string `toml:"isolation"`
	} `toml:"environment"`
}

func flagsOf(t *testing.T, l *ledger.Ledger, id string) ([]string, string) {
	t.Helper()
	rows, err := l.Rows(ctx, ledger.Filter{Kind: ledger.KindVerdict})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.VerdictID == id {
			return r.Flags, r.RunnerClass
		}
	}
	t.Fatalf("no row for verdict %s in %+v", id, rows)
	return nil, ""
}

// Facts travel as fields: a verdict's flags and runner class reach the
// index rows and the attempts view; an old entry's flags are derived from
// its old fields; and no summary, however it reads, sets a flag.
func TestFlagsComeFromFieldsNeverFromSummaries(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "p1")
	appendOK(t, l, &p)

	flagged := verdictFor(p, ledger.VerdictNeedsHumanReview, "faster")
	flagged.AddFlag(ledger.FlagWeak)
	flagged.AddFlag(ledger.FlagStalePin)
	flagged.RunnerClass = "quiet-box"
	appendOK(t, l, flagged)

	old := &oldVerdict{testEntry: *verdictFor(p, ledger.VerdictError, "baseline failed"), PinUnprotected: true}
	old.Environment.Isolation = "process-group"
	if _, err := l.Append(ctx, old); err != nil {
		t.Fatal(err)
	}

	// A summary that reads like the old prefixes, with fields that say
	// nothing: what an agent that could write a summary would try.
	liar := verdictFor(p, ledger.VerdictAccepted, "weak isolation (process-group): unprotected pin (abc): faster")
	appendOK(t, l, liar)

	want := map[string][]string{
		flagged.ID: {ledger.FlagStalePin, ledger.FlagWeak},
		old.ID:     {ledger.FlagUnprotectedPin, ledger.FlagWeak},
		liar.ID:    nil,
	}
	check := func(l *ledger.Ledger) {
		t.Helper()
		for id, flags := range want {
			got, class := flagsOf(t, l, id)
			if !slices.Equal(got, flags) {
				t.Errorf("row of %s: flags %q, want %q", id, got, flags)
			}
			if wantClass := map[bool]string{true: "quiet-box"}[id == flagged.ID]; class != wantClass {
				t.Errorf("row of %s: runner class %q, want %q", id, class, wantClass)
			}
		}
		attempts, err := l.Attempts(ctx, ledger.Filter{PatchID: p.PatchID})
		if err != nil || len(attempts) != 1 {
			t.Fatalf("Attempts = %+v, %v", attempts, err)
		}
		for _, v := range attempts[0].Verdicts {
			if !slices.Equal(v.Flags, want[v.ID]) {
				t.Errorf("attempt verdict %s: flags %q, want %q", v.ID, v.Flags, want[v.ID])
			}
		}
		s, err := l.Get(ctx, old.ID)
		if err != nil {
			t.Fatal(err)
		}
		var back oldVerdict
		if err := s.Decode(&back); err != nil || !slices.Equal(back.Flags, want[old.ID]) {
			t.Errorf("Decode of the old verdict: flags %q, %v; want %q", back.Flags, err, want[old.ID])
		}
	}
	check(l)

	// A cache written by a hone that did not index flags is rebuilt, not
	// believed: its rows would say no verdict has any.
	idx := filepath.Join(dir, ".git", "hone", "ledger.index")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "\t")
	if err := os.WriteFile(idx, []byte(strings.Replace(string(b), head, "hone-ledger-index 4", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	check(openLedger(t, dir))
	if b, _ := os.ReadFile(idx); !strings.HasPrefix(string(b), head+"\t") {
		t.Errorf("the old-format cache was not rewritten: starts %.40q", b)
	}
}
