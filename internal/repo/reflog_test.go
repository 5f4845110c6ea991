package repo_test

import (
	"github.com/hone-perf/hone/internal/repo"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/testgit"
)

// A branch hone moves must show in `git reflog` as a branch git moved does:
// a rewrite of the ledger branch is told from an append by its reflog, so a
// move without an entry would hide exactly the history verify checks.
func TestHoneMovesAreInGitsReflog(t *testing.T) {
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, map[string]string{"a": "a\n"})
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	head := plumbing.NewHash(testgit.Git(t, dir, "rev-parse", "HEAD"))
	refs := r.Refs().WithReason("hone: test move")
	for _, ref := range []string{"refs/heads/hone/ledger", "refs/notes/hone", "refs/hone/patches/p1"} {
		if err := refs.CompareAndSwap(ctx, ref, head, plumbing.ZeroHash); err != nil {
			t.Fatal(err)
		}
	}
	out := testgit.Git(t, dir, "reflog", "show", "--format=%H %gs", "refs/heads/hone/ledger")
	if out != head.String()+" hone: test move" {
		t.Fatalf("reflog of the ledger branch: %q", out)
	}
	if out := testgit.Git(t, dir, "reflog", "show", "--format=%gs", "refs/notes/hone"); out != "hone: test move" {
		t.Fatalf("reflog of the notes ref: %q", out)
	}
	// git keeps no reflog for other refs unless core.logAllRefUpdates says always.
	if log, err := refs.Reflog("refs/hone/patches/p1"); err != nil || len(log) != 0 {
		t.Fatalf("a patch ref got a reflog: %v %v", log, err)
	}
	second := plumbing.NewHash(testgit.Git(t, dir, "commit-tree", "-p", "HEAD", "-m", "x", "HEAD^{tree}"))
	if err := refs.CompareAndSwap(ctx, "refs/heads/hone/ledger", second, head); err != nil {
		t.Fatal(err)
	}
	log, err := refs.Reflog("refs/heads/hone/ledger")
	if err != nil || len(log) != 2 || log[1].Old != head || log[1].New != second || !log[0].Old.IsZero() {
		t.Fatalf("reflog entries: %+v %v", log, err)
	}
	if err := refs.Delete(ctx, "refs/heads/hone/ledger", second); err != nil {
		t.Fatal(err)
	}
	if log, _ := refs.Reflog("refs/heads/hone/ledger"); len(log) != 0 {
		t.Fatalf("a deleted ref kept its reflog: %+v", log)
	}
}

func TestReflogFollowsLogAllRefUpdates(t *testing.T) {
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, map[string]string{"a": "a\n"})
	head := plumbing.NewHash(testgit.Git(t, dir, "rev-parse", "HEAD"))
	testgit.Git(t, dir, "config", "core.logAllRefUpdates", "always")
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refs().CompareAndSwap(ctx, "refs/hone/patches/p1", head, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if log, err := r.Refs().Reflog("refs/hone/patches/p1"); err != nil || len(log) != 1 {
		t.Fatalf("logAllRefUpdates=always: %+v %v", log, err)
	}
	testgit.Git(t, dir, "config", "core.logAllRefUpdates", "false")
	if err := r.Refs().CompareAndSwap(ctx, "refs/heads/other", head, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if out := testgit.Git(t, dir, "reflog", "show", "refs/heads/other"); strings.TrimSpace(out) != "" {
		t.Fatalf("logAllRefUpdates=false still logged: %q", out)
	}
}
