package repo_test

import (
	"context"
	"errors"
	"github.com/hone-perf/hone/internal/repo"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
)

// sameDir reports whether a and b are one directory, however spelled (the
// temporary directory may be reached through a symlink).
func sameDir(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb)
}

// hone's state is shared by every worktree of a repository: a linked
// worktree and a subfolder both find the main .git/hone.
func TestStateDirIsSharedByLinkedWorktrees(t *testing.T) {
	dir := testgit.NewRepo(t, map[string]string{"src/a.c": "int a;\n"})
	linked := filepath.Join(t.TempDir(), "linked")
	testgit.Git(t, dir, "worktree", "add", "-q", "--detach", linked)
	want := filepath.Join(dir, ".git", "hone", "x", "y")
	for _, from := range []string{dir, filepath.Join(dir, "src"), linked, filepath.Join(linked, "src")} {
		r, err := repo.Open(from)
		if err != nil {
			t.Fatalf("repo.Open(%s): %v", from, err)
		}
		d, err := r.StateDir("x", "y")
		if err != nil {
			t.Fatal(err)
		}
		if !sameDir(t, d, want) {
			t.Errorf("from %s: StateDir = %s, want %s", from, d, want)
		}
		if got := r.StatePath("x", "f.lock"); !sameDir(t, filepath.Dir(got), filepath.Dir(want)) || filepath.Base(got) != "f.lock" {
			t.Errorf("from %s: StatePath = %s", from, got)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	t.Run("outside a repository", func(t *testing.T) {
		_, err := repo.Open(t.TempDir())
		if errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), "not inside a git repository") || !strings.Contains(err.Error(), "git init") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a .git file that is not a gitdir file", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("nonsense\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := repo.Open(dir)
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), "git worktree repair") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestResolveCommit(t *testing.T) {
	ctx := context.Background()
	dir := testgit.NewRepo(t, map[string]string{"a": "1\n"})
	head := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.Git(t, dir, "tag", "-a", "-m", "release", "v1")
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{"HEAD", "main", "v1", head, head[:10], "HEAD@{0}"} {
		if got, err := r.ResolveCommit(ctx, rev); err != nil || got != head {
			t.Errorf("ResolveCommit(%q) = %q, %v; want %s", rev, got, err, head)
		}
	}
	tree := testgit.Git(t, dir, "rev-parse", "HEAD^{tree}")
	for _, rev := range []string{"no-such-branch", tree, "--all"} {
		if got, err := r.ResolveCommit(ctx, rev); !errors.Is(err, repo.ErrNoCommit) {
			t.Errorf("ResolveCommit(%q) = %q, %v; want repo.ErrNoCommit", rev, got, err)
		}
	}
	if !r.HasCommits() {
		t.Error("HasCommits = false in a repository with a commit")
	}
	empty := t.TempDir()
	testgit.Git(t, empty, "init", "-q")
	if e, err := repo.Open(empty); err != nil || e.HasCommits() {
		t.Errorf("HasCommits in an empty repository: %v", err)
	}
}

// hone init and hone worktree enter write the same one line, once, whatever
// spelling of it the file already has.
func TestIgnoreWorktrees(t *testing.T) {
	for _, c := range []struct {
		before, after string
		wrote         bool
	}{
		{"", "/.sema-worktrees/\n", true},
		{"*.o", "*.o\n/.sema-worktrees/\n", true},
		{"*.o\n", "*.o\n/.sema-worktrees/\n", true},
		{".sema-worktrees/\n", ".sema-worktrees/\n", false},
		{"  /.sema-worktrees  \n", "  /.sema-worktrees  \n", false},
		{".sema-worktrees", ".sema-worktrees", false},
		{".sema-worktrees/x\n", ".sema-worktrees/x\n/.sema-worktrees/\n", true},
	} {
		root := t.TempDir()
		p := filepath.Join(root, ".gitignore")
		if c.before != "" {
			if err := os.WriteFile(p, []byte(c.before), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		wrote, err := repo.IgnoreWorktrees(root)
		b, _ := os.ReadFile(p)
		if err != nil || wrote != c.wrote || string(b) != c.after {
			t.Errorf("%q: wrote %v, %v, file %q; want %v, %q", c.before, wrote, err, b, c.wrote, c.after)
		}
	}
}
