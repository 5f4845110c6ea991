package worktree

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/testgit"
)

// enterNamed creates the managed worktree name in a new session and returns
// its path.
func enterNamed(t *testing.T, repo *repo.Repo, name string) string {
	t.Helper()
	res, err := Enter(context.Background(), repo, EnterOptions{Name: name, Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	return res.WorktreePath
}

func TestExitOutsideASessionChangesNothing(t *testing.T) {
	repo := newRepo(t)
	res, err := Exit(context.Background(), repo, ExitOptions{Action: "remove"})
	if err != nil || res.Active || res.Removed || res.Message != NoSessionMessage || res.Dir != "" {
		t.Fatalf("Exit without a session = %+v, %v; want an honest no-op", res, err)
	}
}

func TestExitKeepLeavesTheWorktreeAndReturnsHome(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	path := enterNamed(t, repo, "kept")
	res, err := Exit(ctx, repo, ExitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Active || res.Removed || res.Action != "keep" || res.Dir != repo.Root || !exists(path) {
		t.Fatalf("Exit keep = %+v; want the worktree kept and the way back to %s", res, repo.Root)
	}
	if st, err := Status(ctx, repo); err != nil || st.Active {
		t.Fatalf("Status after exit = %+v, %v; want no session", st, err)
	}
	// The kept worktree is listed, no longer active, and can be resumed.
	list, err := List(ctx, repo)
	if err != nil || len(list) != 1 || list[0].Name != "kept" || list[0].Active || list[0].Base != "fresh" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	again, err := Enter(ctx, repo, EnterOptions{Name: "kept", Cwd: repo.Root})
	if err != nil || again.Kind != Resumed || again.BaseCommit != list[0].BaseCommit {
		t.Fatalf("resume = %+v, %v; want the kept worktree with its recorded base", again, err)
	}
}

// An agent that wants its traces gone asks to remove a worktree holding work.
// Without --discard-changes nothing is lost: the refusal counts what is there,
// the worktree and its branch stay, and the session stays active.
func TestRemoveNeverLosesWorkSilently(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	path := enterNamed(t, repo, "work")
	testgit.WriteFiles(t, path, map[string]string{"committed.txt": "1", "loose.txt": "2"})
	testgit.Git(t, path, "add", "committed.txt")
	testgit.Git(t, path, "commit", "-q", "-m", "work")

	_, err := Exit(ctx, repo, ExitOptions{Action: "remove"})
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "1 uncommitted file and 1 commit not on its base main") {
		t.Fatalf("remove with work: %v; want a policy refusal counting 1 file and 1 commit", err)
	}
	st, err := Status(ctx, repo)
	if err != nil || !st.Active || st.DirtyFiles != 1 || st.Commits != 1 || !exists(path) || !branchExists(repo, "worktree-work") {
		t.Fatalf("after the refusal: status %+v, %v; want the session, the worktree and its branch intact", st, err)
	}

	res, err := Exit(ctx, repo, ExitOptions{Action: "remove", DiscardChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Removed || res.DiscardedFiles != 1 || res.DiscardedCommits != 1 || exists(path) || branchExists(repo, "worktree-work") {
		t.Fatalf("remove --discard-changes = %+v; want the worktree and branch gone, the discards counted", res)
	}
	if !strings.Contains(res.Message, "discarding 1 uncommitted file and 1 commit") {
		t.Errorf("message %q does not name what was discarded", res.Message)
	}
	if exists(recordFile(repo, "work")) {
		t.Error("the removed worktree's record was left behind")
	}
}

func TestRemoveOfACleanWorktree(t *testing.T) {
	repo := newRepo(t)
	path := enterNamed(t, repo, "clean")
	res, err := Exit(context.Background(), repo, ExitOptions{Action: "remove"})
	if err != nil || !res.Removed || exists(path) || res.DiscardedFiles+res.DiscardedCommits != 0 {
		t.Fatalf("remove clean = %+v, %v", res, err)
	}
}

// hone never deletes a worktree it did not make, whatever the caller asks.
func TestRemoveRefusesAWorktreeEnteredByPath(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	other := filepath.Join(t.TempDir(), "by-hand")
	testgit.Git(t, repo.Root, "worktree", "add", "-q", "-b", "by-hand", other)
	if _, err := Enter(ctx, repo, EnterOptions{Path: other, Cwd: repo.Root}); err != nil {
		t.Fatal(err)
	}
	_, err := Exit(ctx, repo, ExitOptions{Action: "remove", DiscardChanges: true})
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "entered with --path") {
		t.Fatalf("remove of a path-entered worktree: %v; want a policy refusal", err)
	}
	if !exists(other) || !branchExists(repo, "by-hand") {
		t.Fatal("the path-entered worktree or its branch was touched")
	}
}

func TestExitReturnsToTheRootWhenTheOriginalDirectoryIsGone(t *testing.T) {
	repo := newRepo(t)
	scratch := filepath.Join(repo.Root, "scratch")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Enter(context.Background(), repo, EnterOptions{Name: "w", Cwd: scratch}); err != nil {
		t.Fatal(err)
	}
	os.Remove(scratch)
	res, err := Exit(context.Background(), repo, ExitOptions{})
	if err != nil || !res.OriginalCwdGone || res.Dir != repo.Root {
		t.Fatalf("Exit = %+v, %v; want the repository root, and to say why", res, err)
	}
}

func TestExitOptionsAreChecked(t *testing.T) {
	repo := newRepo(t)
	for _, opts := range []ExitOptions{{Action: "delete"}, {Action: "keep", DiscardChanges: true}} {
		if _, err := Exit(context.Background(), repo, opts); !errs.Is(err, errs.Usage) {
			t.Errorf("Exit(%+v): %v; want a usage error", opts, err)
		}
	}
}

// A worktree deleted behind hone's back: status says so, and exit still ends
// the session rather than leaving it pointing at nothing.
func TestSessionWhoseWorktreeWasDeleted(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	path := enterNamed(t, repo, "gone")
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	st, err := Status(ctx, repo)
	if err != nil || !st.Active || !st.WorktreeMissing || !strings.Contains(st.Message, "no longer exists") {
		t.Fatalf("Status = %+v, %v; want the missing worktree reported", st, err)
	}
	list, err := List(ctx, repo)
	if err != nil || len(list) != 1 || !list[0].Prunable {
		t.Fatalf("List = %+v, %v; want the worktree listed as prunable", list, err)
	}
	if _, err := Exit(ctx, repo, ExitOptions{Action: "remove"}); err == nil {
		t.Fatal("remove of a deleted worktree succeeded without git")
	}
	if _, err := Exit(ctx, repo, ExitOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := Status(ctx, repo); st.Active {
		t.Fatal("the session outlived exit")
	}
}
