package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

func TestEmptyLedger(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	got, err := l.List(ctx, ledger.Filter{})
	if err != nil || len(got) != 0 {
		t.Fatalf("List on an empty ledger = %v, %v; want nothing", got, err)
	}
	if _, err := l.Get(ctx, strings.Repeat("a", 32)); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Get on an empty ledger: %v, want NotFound", err)
	}
	if _, err := l.Latest(ctx, "demo", ledger.KindProfile); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Latest on an empty ledger: %v, want NotFound", err)
	}
	rep, err := l.Verify(ctx, ledger.VerifyOptions{})
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("Verify on an empty ledger = %+v, %v; want clean", rep, err)
	}
	if _, err := gitErr(dir, "rev-parse", "--verify", "hone/ledger"); err == nil {
		t.Fatal("reading an empty ledger created its branch")
	}

	// The first append creates the branch, README included.
	p := makePatch(t, dir, "p1")
	if _, err := l.Append(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if out := testgit.Git(t, dir, "ls-tree", "-r", "--name-only", "hone/ledger"); !strings.Contains(out, "README.md") || !strings.Contains(out, p.ID+".toml") {
		t.Fatalf("branch after the first append holds:\n%s", out)
	}
}

func TestInitIsIdempotent(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	created, err := l.Init(ctx)
	if err != nil || !created {
		t.Fatalf("Init = %v, %v; want created", created, err)
	}
	tip := testgit.Git(t, dir, "rev-parse", "hone/ledger")
	created, err = l.Init(ctx)
	if err != nil || created {
		t.Fatalf("second Init = %v, %v; want nothing done", created, err)
	}
	if again := testgit.Git(t, dir, "rev-parse", "hone/ledger"); again != tip {
		t.Fatalf("second Init moved the branch from %s to %s", tip, again)
	}
	if out := testgit.Git(t, dir, "show", "hone/ledger:README.md"); !strings.Contains(out, "append-only") {
		t.Fatalf("README: %s", out)
	}
}

func TestAppendAndLookups(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "p1")
	p.Samples = []float64{1.5, 2}
	s, err := l.Append(ctx, &p, ledger.Attachment{Name: "diff", Data: []byte("the diff")})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID == "" || p.Schema != ledger.SchemaVersion || p.Created.IsZero() || p.Created.Location().String() != "UTC" {
		t.Fatalf("Append did not fill id, schema and a UTC creation time: %+v", p.Common)
	}
	if s.Path != ledger.EntryPath("demo", ledger.KindProposal, p.ID) {
		t.Fatalf("stored at %s", s.Path)
	}
	if out := testgit.Git(t, dir, "show", "hone/ledger:"+s.Path); !strings.Contains(out, `hypothesis = "return p1"`) {
		t.Fatalf("git show of the entry:\n%s", out)
	}

	v := verdictFor(p, ledger.VerdictRejectedBench, "no change:\nratio 1.00")
	if _, err := l.Append(ctx, v); err != nil {
		t.Fatal(err)
	}
	note := testgit.Git(t, dir, "notes", "--ref=hone", "show", p.Commit)
	if want := ledger.NoteLine(&v.Common); note != want || strings.Contains(note, "\n") {
		t.Fatalf("note = %q, want the one line %q", note, want)
	}
	other := makePatch(t, dir, "p2")
	if _, err := l.Append(ctx, &other); err != nil {
		t.Fatal(err)
	}

	got, err := l.Get(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var back testEntry
	if err := got.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.Note != "patch p1" || len(back.Samples) != 2 || back.ID != p.ID || !back.Created.Equal(p.Created) {
		t.Fatalf("decoded %+v", back)
	}
	byPatch, err := l.ByPatch(ctx, "p1")
	if err != nil || len(byPatch) != 2 || byPatch[0].ID != p.ID || byPatch[1].ID != v.ID {
		t.Fatalf("ByPatch(p1) = %v, %v; want the proposal then the verdict", ids(byPatch), err)
	}
	byKey, err := l.List(ctx, ledger.Filter{AttemptKey: p.AttemptKey})
	if err != nil || len(byKey) != 2 {
		t.Fatalf("List by attempt key = %v, %v", ids(byKey), err)
	}
	latest, err := l.Latest(ctx, "demo", ledger.KindProposal)
	if err != nil || latest.ID != other.ID {
		t.Fatalf("Latest proposal = %v, %v; want %s", latest, err, other.ID)
	}
	att, err := l.Attachment(ctx, got, "diff")
	if err != nil || string(att) != "the diff" {
		t.Fatalf("Attachment = %q, %v", att, err)
	}
	if _, err := l.Attachment(ctx, got, "nope"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("missing attachment: %v", err)
	}
	all, err := l.List(ctx, ledger.Filter{Kind: ledger.KindProposal})
	if err != nil || len(all) != 2 {
		t.Fatalf("List proposals = %v, %v", ids(all), err)
	}
	rep, err := l.Verify(ctx, ledger.VerifyOptions{})
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestAppendRefusesBadEntries(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	good := makePatch(t, dir, "p1")
	cases := map[string]func(e *testEntry){
		"unknown kind":        func(e *testEntry) { e.Kind = "guess" },
		"target with a slash": func(e *testEntry) { e.Target = "a/b" },
		"unknown verdict":     func(e *testEntry) { e.Verdict = "great" },
		"verdict without one": func(e *testEntry) { e.Kind = ledger.KindVerdict },
		"proposal without id": func(e *testEntry) { e.PatchID = "" },
		"id of another shape": func(e *testEntry) { e.ID = "../../x" },
		"schema from later":   func(e *testEntry) { e.Schema = ledger.SchemaVersion + 1 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			e := good
			mutate(&e)
			if _, err := l.Append(ctx, &e); !errs.Is(err, errs.Invalid) {
				t.Fatalf("Append: %v, want an invalid-input error", err)
			}
		})
	}
	e := good
	if _, err := l.Append(ctx, &e, ledger.Attachment{Name: "../x"}); !errs.Is(err, errs.Invalid) {
		t.Fatalf("attachment with a path: %v", err)
	}
	if _, err := gitErr(dir, "rev-parse", "--verify", "hone/ledger"); err == nil {
		t.Fatal("a refused append created the branch")
	}
}

func TestCorruptIndexIsRebuilt(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "p1")
	if _, err := l.Append(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if _, err := l.List(ctx, ledger.Filter{}); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, ".git", "hone", "ledger.index")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	// Same length, other id: only the checksum can tell.
	forged := strings.Replace(string(b), p.ID, strings.Repeat("0", 32), 1)
	if err := os.WriteFile(idx, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	// A fresh Ledger reads the file; the one above remembers its index.
	got, err := openLedger(t, dir).Get(ctx, p.ID)
	if err != nil || got.ID != p.ID {
		t.Fatalf("Get after corrupting the index = %v, %v", got, err)
	}
	if err := os.WriteFile(idx, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if all, err := openLedger(t, dir).List(ctx, ledger.Filter{}); err != nil || len(all) != 1 {
		t.Fatalf("List after replacing the index with garbage = %v, %v", ids(all), err)
	}
}

func ids(s []*ledger.Stored) []string {
	var out []string
	for _, e := range s {
		out = append(out, e.ID)
	}
	return out
}

func TestRowsJoinTheLatestVerdict(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "p1")
	appendOK(t, l, &p)
	q := makePatch(t, dir, "p2")
	appendOK(t, l, &q)
	first := verdictFor(p, ledger.VerdictError, "baseline failed")
	appendOK(t, l, first)
	second := verdictFor(p, ledger.VerdictAccepted, "faster")
	appendOK(t, l, second)

	all, err := l.Rows(ctx, ledger.Filter{})
	if err != nil || len(all) != 4 {
		t.Fatalf("Rows = %d rows, %v", len(all), err)
	}
	if a := all[0]; a.ID != p.ID || a.Verdict != ledger.VerdictAccepted || a.VerdictID != second.ID || a.Summary != "faster" {
		t.Fatalf("proposal row = %+v, want the latest verdict joined", a)
	}
	if a := all[1]; a.ID != q.ID || a.Verdict != "" {
		t.Fatalf("unjudged proposal row = %+v", a)
	}
	if a := all[2]; a.Kind != ledger.KindVerdict || a.Verdict != ledger.VerdictError || a.VerdictID != first.ID {
		t.Fatalf("verdict row = %+v, want its own verdict", a)
	}
	props, err := l.Rows(ctx, ledger.Filter{Kind: ledger.KindProposal, AttemptKey: p.AttemptKey})
	if err != nil || len(props) != 1 || props[0].Verdict != ledger.VerdictAccepted {
		t.Fatalf("Rows by kind and key = %+v, %v", props, err)
	}
	if none, err := l.Rows(ctx, ledger.Filter{Target: "other"}); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("Rows of another target = %#v, %v; want an empty, non-nil list", none, err)
	}
	attempts, err := l.Attempts(ctx, ledger.Filter{AttemptKey: p.AttemptKey})
	if err != nil || len(attempts) != 1 || len(attempts[0].Verdicts) != 2 || attempts[0].ProposalID != p.ID {
		t.Fatalf("Attempts by key = %+v, %v", attempts, err)
	}
	if a := attempts[0]; a.Latest().ID != second.ID || a.Outcome().ID != second.ID || !a.Verdicts[0].Trusted || a.Verdicts[0].Signer != "unsigned" {
		t.Fatalf("without allowed signers every verdict is trusted and shows unsigned: %+v", a.Verdicts)
	}
}

// The cache follows the branch: incrementally after appends, and by a
// rebuild after anything else, such as a hand edit of an entry.
func TestIndexFollowsTheBranch(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	appendProfiles(t, l, "a", 3)
	if all, err := l.List(ctx, ledger.Filter{}); err != nil || len(all) != 3 {
		t.Fatalf("List = %d, %v", len(all), err)
	}
	appendProfiles(t, l, "b", 2)
	all, err := l.List(ctx, ledger.Filter{})
	if err != nil || len(all) != 5 {
		t.Fatalf("List after more appends = %d, %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Created.Before(all[i-1].Created) {
			t.Fatal("List is not in time order")
		}
	}
	raw := string(all[0].Raw)
	rewriteEntry(t, dir, all[0].Path, strings.Replace(raw, `kind = "profile"`, "kind = \"profile\"\nhotspot = \"edited\"", 1))
	got, err := l.Rows(ctx, ledger.Filter{Kind: ledger.KindProfile})
	if err != nil || len(got) != 5 || got[0].ID != all[0].ID || got[0].Hotspot != "edited" {
		t.Fatalf("after an edit, Rows = %+v, %v; want the edited entry", got, err)
	}
}

// A linked worktree shares the ledger of its main worktree: refs, objects and
// the cache all live in the common git directory.
func TestLinkedWorktreeSharesTheLedger(t *testing.T) {
	dir := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	testgit.Git(t, dir, "worktree", "add", "-q", "--detach", wt)
	appendProfiles(t, openLedger(t, filepath.Join(wt, "targets", "demo")), "wt", 2)
	appendProfiles(t, openLedger(t, dir), "main", 1)
	for _, from := range []string{dir, wt} {
		if all, err := openLedger(t, from).List(ctx, ledger.Filter{}); err != nil || len(all) != 3 {
			t.Fatalf("from %s: List = %d entries, %v; want 3", from, len(all), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hone", "ledger.index")); err != nil {
		t.Fatalf("the cache is not in the common git directory: %v", err)
	}
	assertSound(t, dir, openLedger(t, wt))
}

// A new tip whose tree adds no file (a merge that brings no entry, as a
// pull's realign makes) keeps the body of the index it was refreshed from,
// which may be the mapped cache file: the mapping must live as long as
// any index that reads it. It was unmapped with the old index, and the
// next query read freed memory (hone mcp died of a SIGSEGV in a fleet ask).
func TestAnIndexRefreshedToATipThatAddsNothingKeepsItsMapping(t *testing.T) {
	dir := newRepo(t)
	appendProfiles(t, openLedger(t, dir), "a", 3)
	if _, err := openLedger(t, dir).List(ctx, ledger.Filter{}); err != nil {
		t.Fatal(err)
	}
	// A fresh Ledger maps the cache file the List above wrote.
	l := openLedger(t, dir)
	if all, err := l.List(ctx, ledger.Filter{}); err != nil || len(all) != 3 {
		t.Fatalf("List = %d, %v", len(all), err)
	}
	for i := range 3 {
		tip := testgit.Git(t, dir, "rev-parse", "hone/ledger")
		next := testgit.Git(t, dir, "commit-tree", "-p", tip, "-m", fmt.Sprintf("merge %d", i), "hone/ledger^{tree}")
		testgit.Git(t, dir, "update-ref", "refs/heads/hone/ledger", next, tip)
		for range 2 {
			if all, err := l.List(ctx, ledger.Filter{}); err != nil || len(all) != 3 {
				t.Fatalf("List after a tip that adds nothing = %d, %v", len(all), err)
			}
			// The old index is gone: let its mapping's cleanup run.
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
		}
	}
}
