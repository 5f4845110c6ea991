package ledger_test

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// judgedLedger holds one proposal with its verdict (and note), and one more
// proposal, all sound.
func judgedLedger(t *testing.T) (dir string, l *ledger.Ledger, p testEntry, v *testEntry) {
	t.Helper()
	dir = newRepo(t)
	l = openLedger(t, dir)
	p = makePatch(t, dir, "p1")
	appendOK(t, l, &p)
	v = verdictFor(p, ledger.VerdictAccepted, "faster")
	appendOK(t, l, v)
	q := makePatch(t, dir, "p2")
	appendOK(t, l, &q)
	assertSound(t, dir, l)
	return dir, l, p, v
}

func TestVerifyDetects(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(t *testing.T, dir string, p testEntry, v *testEntry)
		want  []string // problem kinds, each must appear
	}{
		{"entry modified by a later commit", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			raw := testgit.Git(t, dir, "show", "hone/ledger:"+path(p))
			rewriteEntry(t, dir, path(p), strings.Replace(raw, "return p1", "return p9", 1)+"\n")
		}, []string{ledger.ProblemModified}},
		{"entry deleted by a later commit", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			editLedger(t, dir, func(run func(string, ...string) string) {
				run("", "update-index", "--force-remove", path(p))
			})
		}, []string{ledger.ProblemDeleted}},
		{"entry moved", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			blob := testgit.Git(t, dir, "rev-parse", "hone/ledger:"+path(p))
			editLedger(t, dir, func(run func(string, ...string) string) {
				run("", "update-index", "--force-remove", path(p))
				run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+",other/proposal/00/"+p.ID+".toml")
			})
		}, []string{ledger.ProblemDeleted, ledger.ProblemMisplaced}},
		{"entry placed by hand under another id", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			blob := testgit.Git(t, dir, "rev-parse", "hone/ledger:"+path(p))
			id := strings.Repeat("0", 32)
			editLedger(t, dir, func(run func(string, ...string) string) {
				run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+ledger.EntryPath("demo", ledger.KindProposal, id))
			})
		}, []string{ledger.ProblemMisplaced}},
		{"patch commit missing", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			testgit.Git(t, dir, "update-ref", "-d", ledger.PatchRef("p1"))
		}, []string{ledger.ProblemMissingPatch}},
		{"patch ref moved to another commit", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			testgit.Git(t, dir, "update-ref", ledger.PatchRef("p1"), "main")
		}, []string{ledger.ProblemMissingPatch}},
		{"note that disagrees", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			line := strings.Replace(ledger.NoteLine(&v.Common), "accepted", "rejected-bench", 1)
			testgit.Git(t, dir, "notes", "--ref=hone", "add", "-f", "-m", line, p.Commit)
		}, []string{ledger.ProblemNoteMismatch, ledger.ProblemMissingNote}},
		{"note line with no entry", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			testgit.Git(t, dir, "notes", "--ref=hone", "append", "-m", "hone-verdict "+strings.Repeat("1", 32)+" accepted patch=p1 forged", p.Commit)
		}, []string{ledger.ProblemOrphanNote}},
		{"stray file", func(t *testing.T, dir string, p testEntry, v *testEntry) {
			rewriteEntry(t, dir, "demo/notes.txt", "hello\n")
		}, []string{ledger.ProblemStray}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, l, p, v := judgedLedger(t)
			c.spoil(t, dir, p, v)
			rep, err := l.Verify(ctx, ledger.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, pr := range rep.Problems {
				got[pr.Kind] = true
			}
			for _, k := range c.want {
				if !got[k] {
					t.Errorf("no %q problem; got %+v", k, rep.Problems)
				}
			}
		})
	}
}

func TestVerifyDetectsAWrongDiffHash(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "p1")
	p.DiffSHA256 = strings.Repeat("ab", 32)
	appendOK(t, l, &p)
	rep, err := l.Verify(ctx, ledger.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Kind != ledger.ProblemDiffMismatch {
		t.Fatalf("problems = %+v, want one diff-mismatch", rep.Problems)
	}
}

// A verdict stored without its note (hone killed in between) is reported,
// and repair adds exactly the missing line.
func TestRepairAddsMissingNotes(t *testing.T) {
	dir, l, p, v := judgedLedger(t)
	testgit.Git(t, dir, "notes", "--ref=hone", "remove", p.Commit)
	testgit.Git(t, dir, "notes", "--ref=hone", "add", "-m", "a person's own remark", p.Commit)
	rep, err := l.Verify(ctx, ledger.VerifyOptions{})
	if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Kind != ledger.ProblemMissingNote {
		t.Fatalf("Verify = %+v, %v; want one missing-note", rep, err)
	}
	n, err := l.RepairNotes(ctx)
	if err != nil || n != 1 {
		t.Fatalf("RepairNotes = %d, %v", n, err)
	}
	assertSound(t, dir, l)
	note := testgit.Git(t, dir, "notes", "--ref=hone", "show", p.Commit)
	if want := "a person's own remark\n" + ledger.NoteLine(&v.Common); note != want {
		t.Fatalf("note = %q, want %q", note, want)
	}
	if n, err := l.RepairNotes(ctx); err != nil || n != 0 {
		t.Fatalf("second RepairNotes = %d, %v; want nothing to do", n, err)
	}
}

func path(e testEntry) string { return ledger.EntryPath(e.Target, e.Kind, e.ID) }
