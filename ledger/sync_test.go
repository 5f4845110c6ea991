package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

func appendProfiles(t *testing.T, l *ledger.Ledger, tag string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		e := &testEntry{Note: fmt.Sprintf("%s-%d", tag, i)}
		e.Kind, e.Target = ledger.KindProfile, "demo"
		if _, err := l.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTwoClonesConverge(t *testing.T) {
	base := t.TempDir()
	remote := filepath.Join(base, "remote.git")
	testgit.Git(t, base, "init", "-q", "--bare", "-b", "main", remote)
	a := newRepo(t)
	testgit.Git(t, a, "remote", "add", "origin", remote)
	testgit.Git(t, a, "push", "-q", "origin", "main")
	b := filepath.Join(base, "b")
	testgit.Git(t, base, "clone", "-q", remote, b)
	la, lb := openLedger(t, a), openLedger(t, b)

	// Each side proposes a patch and judges it, so notes and patch refs
	// travel too; the same patch commit gets a verdict on both sides.
	pa := makePatch(t, a, "pa")
	appendOK(t, la, &pa)
	appendOK(t, la, verdictFor(pa, ledger.VerdictAccepted, "faster by 12%"))
	appendProfiles(t, la, "a", 98)
	testgit.Git(t, b, "fetch", "-q", a, "refs/hone/patches/pa:refs/hone/patches/pa")
	pb := makePatch(t, b, "pb")
	appendOK(t, lb, &pb)
	appendOK(t, lb, verdictFor(pa, ledger.VerdictRejectedBench, "no change on b"))
	appendProfiles(t, lb, "b", 98)

	// The report says what the push did to the remote: an empty one gets
	// the branch created with all of a's entries.
	if rep, err := la.Push(ctx, "origin"); err != nil || !rep.Pushed || rep.RemoteLedger != "created" || rep.RemoteNotes != "created" ||
		rep.EntriesPushed != 100 || rep.PatchesPushed != 1 {
		t.Fatalf("push from a = %+v, %v; want the remote ledger created with 100 entries and 1 patch", rep, err)
	}
	rep, err := lb.Push(ctx, "origin")
	if err != nil || !rep.Pushed || rep.Ledger != "merged" || rep.EntriesAdded != 100 || rep.RemoteLedger != "updated" ||
		rep.EntriesPushed != 100 || rep.PatchesPushed != 1 {
		t.Fatalf("push from b = %+v, %v; want a merge of a's 100 entries, then a push of b's 100", rep, err)
	}
	if rep, err := lb.Push(ctx, "origin"); err != nil || rep.Pushed || rep.RemoteLedger != "up-to-date" || rep.EntriesPushed != 0 {
		t.Fatalf("pushing again = %+v, %v; want nothing pushed", rep, err)
	}
	if rep, err := la.Pull(ctx, "origin"); err != nil || rep.Ledger != "fast-forward" || rep.EntriesAdded != 100 {
		t.Fatalf("pull into a = %+v, %v", rep, err)
	}
	for _, side := range []struct {
		dir string
		l   *ledger.Ledger
	}{{a, la}, {b, lb}} {
		all, err := side.l.List(ctx, ledger.Filter{})
		if err != nil || len(all) != 200 {
			t.Fatalf("%s holds %d entries (%v), want 200", side.dir, len(all), err)
		}
		assertSound(t, side.dir, side.l)
	}
	if ta, tb := testgit.Git(t, a, "rev-parse", "hone/ledger", "refs/notes/hone"), testgit.Git(t, b, "rev-parse", "hone/ledger", "refs/notes/hone"); ta != tb {
		t.Fatalf("ledger and notes tips differ:\n%s\n%s", ta, tb)
	}
	note := testgit.Git(t, a, "notes", "--ref=hone", "show", pa.Commit)
	if want := 2; len(splitLines(note)) != want {
		t.Fatalf("the note on pa holds %q, want both verdict lines", note)
	}
	// Pulling again changes nothing.
	if rep, err := lb.Pull(ctx, "origin"); err != nil || rep.Ledger != "up-to-date" || rep.Notes != "up-to-date" {
		t.Fatalf("second pull = %+v, %v", rep, err)
	}
}

func TestPullRefusesAChangedEntry(t *testing.T) {
	a := newRepo(t)
	la := openLedger(t, a)
	appendProfiles(t, la, "a", 1)
	b := t.TempDir()
	testgit.Git(t, b, "clone", "-q", "--no-checkout", a, ".")
	testgit.Git(t, b, "fetch", "-q", "origin", "hone/ledger:hone/ledger")
	all, err := la.List(ctx, ledger.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// b rewrites a's entry by hand, then appends; a must refuse the union.
	rewriteEntry(t, b, all[0].Path, "tampered")
	before := testgit.Git(t, a, "rev-parse", "hone/ledger")
	if _, err := la.Pull(ctx, b); !errs.Is(err, errs.Invalid) {
		t.Fatalf("pull of a changed entry: %v, want an integrity error", err)
	}
	if after := testgit.Git(t, a, "rev-parse", "hone/ledger"); after != before {
		t.Fatal("a refused pull still moved the branch")
	}
}

func appendOK(t *testing.T, l *ledger.Ledger, e *testEntry) {
	t.Helper()
	if _, err := l.Append(ctx, e); err != nil {
		t.Fatal(err)
	}
}

// A remote whose ledger was rewritten since this clone last fetched it (here
// a new root holding the same entries) is not merged: the pull is refused,
// nothing moves, and the next pull says so again.
func TestPullRefusesARewrittenRemote(t *testing.T) {
	a := newRepo(t)
	la := openLedger(t, a)
	appendProfiles(t, la, "a", 2)
	b := t.TempDir()
	testgit.Git(t, b, "clone", "-q", a, ".")
	lb := openLedger(t, b)
	if _, err := lb.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	before := testgit.Git(t, b, "rev-parse", "hone/ledger")
	root := testgit.Git(t, a, "commit-tree", "hone/ledger^{tree}", "-m", "hone: start the ledger")
	testgit.Git(t, a, "update-ref", "refs/heads/hone/ledger", root)
	for i := 0; i < 2; i++ {
		_, err := lb.Pull(ctx, "origin")
		if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "was rewritten") {
			t.Fatalf("pull %d of a rewritten remote: %v", i, err)
		}
	}
	if after := testgit.Git(t, b, "rev-parse", "hone/ledger"); after != before {
		t.Fatal("a refused pull moved the branch")
	}
}

// A push updates the remote's refs one by one, and a runner may read them
// between two updates: a proposal it reads must have its patch ref there,
// so the patch refs go first. The remote's reference-transaction hook logs
// the order its refs were committed in.
func TestPushSendsPatchRefsBeforeTheEntriesNamingThem(t *testing.T) {
	base := t.TempDir()
	remote := filepath.Join(base, "remote.git")
	testgit.Git(t, base, "init", "-q", "--bare", "-b", "main", remote)
	log := filepath.Join(base, "order")
	hook := "#!/bin/sh\n[ \"$1\" = committed ] && cut -d' ' -f3 >> " + log + "\nexit 0\n"
	if err := os.WriteFile(filepath.Join(remote, "hooks", "reference-transaction"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	a := newRepo(t)
	testgit.Git(t, a, "remote", "add", "origin", remote)
	testgit.Git(t, a, "push", "-q", "origin", "main")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	l := openLedger(t, a)
	p := makePatch(t, a, "pa")
	appendOK(t, l, &p)
	if _, err := l.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	order := strings.Fields(string(b))
	first := func(prefix string) int {
		return slices.IndexFunc(order, func(ref string) bool { return strings.HasPrefix(ref, prefix) })
	}
	patch, inbox, branch := first(ledger.PatchRefPrefix), first(ledger.InboxRefPrefix), first("refs/heads/hone/ledger")
	if patch < 0 || inbox < 0 || branch < 0 || patch > inbox || patch > branch {
		t.Errorf("the remote committed its refs in the order %v; want the patch ref before the inbox and the branch", order)
	}
}

// A push brings home the branch, the notes and the writer's own inbox,
// never the objects of every other agent's patches: what a push costs must
// not grow with the fleet's history. A pull still brings them, and creates
// each patch ref once.
func TestAPushDoesNotFetchOtherAgentsPatches(t *testing.T) {
	_, a, clone := sharedRemote(t)
	b := clone("b")
	la, lb := openLedger(t, a), openLedger(t, b)
	pb := makePatch(t, b, "b1b1b1b1b1b1b1b1")
	appendOK(t, lb, &pb)
	pb2 := makePatch(t, b, "b2b2b2b2b2b2b2b2")
	appendOK(t, lb, &pb2)
	if _, err := lb.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	pa := makePatch(t, a, "a1a1a1a1a1a1a1a1")
	appendOK(t, la, &pa)
	rep, err := la.Push(ctx, "origin")
	if err != nil || rep.PatchesPushed != 1 || rep.EntriesAdded != 2 {
		t.Fatalf("push from a = %+v, %v; want b's proposals merged and a's patch pushed", rep, err)
	}
	if _, err := gitErr(a, "cat-file", "-e", pb.Commit); err == nil {
		t.Fatalf("a's push fetched b's patch commit %s", pb.Commit)
	}
	if rep, err := la.Pull(ctx, "origin"); err != nil || rep.PatchesAdded != 2 {
		t.Fatalf("pull into a = %+v, %v; want b's two patch refs added", rep, err)
	}
	for _, p := range []testEntry{pb, pb2} {
		if got := testgit.Git(t, a, "rev-parse", ledger.PatchRef(p.PatchID)); got != p.Commit {
			t.Fatalf("a pull brings b's patch ref: %s, want %s", got, p.Commit)
		}
	}
}
