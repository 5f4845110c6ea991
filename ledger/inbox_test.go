package ledger_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// sharedRemote is a bare remote with main pushed from a first clone, and
// a way to make more clones of it.
func sharedRemote(t *testing.T) (remote string, first string, clone func(name string) string) {
	t.Helper()
	base := t.TempDir()
	remote = filepath.Join(base, "remote.git")
	testgit.Git(t, base, "init", "-q", "--bare", "-b", "main", remote)
	first = newRepo(t)
	testgit.Git(t, first, "remote", "add", "origin", remote)
	testgit.Git(t, first, "push", "-q", "origin", "main")
	return remote, first, func(name string) string {
		dir := filepath.Join(base, name)
		testgit.Git(t, base, "clone", "-q", remote, dir)
		return dir
	}
}

// Writers push at once, and most lose the race for the branch: each
// still lands its entries in its inbox without giving up, and one more
// fold brings every entry onto the branch plain git reads.
func TestConcurrentWritersAllArriveThroughTheirInboxes(t *testing.T) {
	remote, _, clone := sharedRemote(t)
	const writers, each = 8, 2
	var wg sync.WaitGroup
	failures := make(chan error, writers*each)
	// Every clone first: a local clone hardlinks the remote's objects and
	// checks each link against its source, and a push arriving meanwhile
	// (its incoming objects folder) fails that check ("hardlink different
	// from source").
	ledgers := make([]*ledger.Ledger, writers)
	for w := range writers {
		ledgers[w] = openLedger(t, clone(fmt.Sprintf("w%d", w)))
	}
	for w, l := range ledgers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				appendProfiles(t, l, fmt.Sprintf("w%d-%d", w, i), 1)
				if _, err := l.Push(ctx, "origin"); err != nil {
					failures <- err
				}
			}
		}()
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Errorf("a push gave up: %v", err)
	}
	inboxes := strings.Fields(testgit.Git(t, remote, "for-each-ref", "--format=%(refname)", ledger.InboxRefPrefix))
	if len(inboxes) != writers {
		t.Errorf("the remote has %d inbox refs, want one ledger inbox for each of %d writers: %v", len(inboxes), writers, inboxes)
	}
	last := clone("last")
	ll := openLedger(t, last)
	if _, err := ll.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	all, err := ll.List(ctx, ledger.Filter{})
	if err != nil || len(all) != writers*each {
		t.Fatalf("a fresh clone holds %d entries (%v), want %d", len(all), err, writers*each)
	}
	assertSound(t, last, ll)
	tree := testgit.Git(t, remote, "ls-tree", "-r", "--name-only", "hone/ledger")
	if n := strings.Count(tree, ".toml"); n != writers*each {
		t.Fatalf("the remote's branch holds %d entries after a fold, want %d:\n%s", n, writers*each, tree)
	}
}

// A writer whose entries reached only its inbox (its offer of the branch
// lost to another writer's) is folded in by the next pull elsewhere; an
// inbox that changes an entry another ledger has is an integrity error.
func TestAnInboxIsFoldedByTheNextPullAndHeldToTheSameEntries(t *testing.T) {
	_, a, clone := sharedRemote(t)
	la := openLedger(t, a)
	appendProfiles(t, la, "a", 2)
	if _, err := la.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	d := clone("d")
	ld := openLedger(t, d)
	if _, err := ld.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	appendProfiles(t, ld, "d", 3)
	testgit.Git(t, d, "push", "-q", "origin", "hone/ledger:"+ledger.InboxLedgerRef("dddd"))
	rep, err := la.Pull(ctx, "origin")
	if err != nil || rep.EntriesAdded != 3 || rep.Ledger != "merged" {
		t.Fatalf("pull into a = %+v, %v; want d's 3 entries folded in", rep, err)
	}
	assertSound(t, a, la)
	if rep, err := la.Pull(ctx, "origin"); err != nil || rep.EntriesAdded != 0 {
		t.Fatalf("pulling again = %+v, %v; want nothing new", rep, err)
	}

	// An inbox holding a changed copy of one of a's entries.
	e := clone("e")
	le := openLedger(t, e)
	if _, err := le.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	p := strings.Fields(testgit.Git(t, e, "ls-tree", "-r", "--name-only", "hone/ledger"))
	var entry string
	for _, f := range p {
		if strings.HasSuffix(f, ".toml") {
			entry = f
		}
	}
	rewriteEntry(t, e, entry, "forged = true\n")
	testgit.Git(t, e, "push", "-q", "origin", "hone/ledger:"+ledger.InboxLedgerRef("eeee"))
	rep, err = la.Pull(ctx, "origin")
	if err != nil || len(rep.InboxesSkipped) != 1 || rep.InboxesSkipped[0].Ref != ledger.InboxLedgerRef("eeee") || rep.InboxesSkipped[0].Path != entry {
		t.Fatalf("pulling a forged inbox = %+v, %v; want it skipped and reported, the pull done", rep, err)
	}
}

// On a remote that runs no hooks anyone can push to any inbox. Someone
// pushes into a's own inbox a ledger with a forged file, which a's pull
// folds as every other clone does (so that a's next push of its inbox is a
// fast-forward); and someone pushes an inbox that rewrites one of a's
// entries, which a's pull skips and reports. a's verify reports both: the
// forged file on the branch, the rewrite at the inbox ref and path.
func TestVerifyReportsAForgedOrRuleBreakingInbox(t *testing.T) {
	_, a, clone := sharedRemote(t)
	la := openLedger(t, a)
	appendProfiles(t, la, "a", 2)
	if _, err := la.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	own := testgit.Git(t, a, "config", "--get", "hone.writerid")

	e := clone("e")
	le := openLedger(t, e)
	if _, err := le.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	editLedger(t, e, func(run func(string, ...string) string) {
		blob := run("kind = \"verdict\"\nverdict = \"accepted\"\n", "hash-object", "-w", "--stdin")
		run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+",demo/verdict/00/forged.toml")
	})
	testgit.Git(t, e, "push", "-q", "origin", "hone/ledger:"+ledger.InboxLedgerRef(own))
	testgit.Git(t, e, "reset", "-q")
	testgit.Git(t, e, "update-ref", "refs/heads/hone/ledger", "hone/ledger~1")
	var entry string
	for _, f := range strings.Fields(testgit.Git(t, e, "ls-tree", "-r", "--name-only", "hone/ledger")) {
		if strings.HasSuffix(f, ".toml") {
			entry = f
		}
	}
	rewriteEntry(t, e, entry, "forged = true\n")
	testgit.Git(t, e, "push", "-q", "origin", "hone/ledger:"+ledger.InboxLedgerRef("eeee"))

	if pr, err := la.Pull(ctx, "origin"); err != nil || len(pr.InboxesSkipped) != 1 {
		t.Fatalf("pulling the rewriting inbox = %+v, %v; want it skipped, the pull done", pr, err)
	}
	if _, err := la.Push(ctx, "origin"); err != nil {
		t.Fatalf("a's push after someone moved its inbox: %v", err)
	}
	rep, err := openLedger(t, a).Verify(ctx, ledger.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"demo/verdict/00/forged.toml":                         false,
		"refs/hone/remotes/origin/inbox/eeee/ledger:" + entry: false,
	}
	for _, p := range rep.Problems {
		if _, ok := want[p.Path]; ok {
			want[p.Path] = true
		}
	}
	for path, found := range want {
		if !found {
			t.Errorf("verify did not report %s; it found %+v", path, rep.Problems)
		}
	}
}
