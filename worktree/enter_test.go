package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/workspace"
)

// An agent told "you are in a worktree" may take it for a sandbox. Every way
// of entering (create, resume, switch by path, re-enter the same path) must
// say that it is only a directory switch.
func TestEveryEnterSaysItIsNotIsolation(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	created, err := Enter(ctx, repo, EnterOptions{Name: "a", Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	replies := []*EnterResult{created}
	if _, err := Exit(ctx, repo, ExitOptions{}); err != nil {
		t.Fatal(err)
	}
	resumed, err := Enter(ctx, repo, EnterOptions{Name: "a", Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	same, err := Enter(ctx, repo, EnterOptions{Path: created.WorktreePath, Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	switched, err := Enter(ctx, repo, EnterOptions{Path: repo.Root, Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	replies = append(replies, resumed, same, switched)
	for _, r := range replies {
		if !strings.HasSuffix(r.Message, "; "+NotIsolation) || !strings.Contains(NotIsolation, "directory switch, not isolation") {
			t.Errorf("%s enter says %q; want it to end saying it is a directory switch, not isolation", r.Kind, r.Message)
		}
	}
}

func TestEnterOptionsAreChecked(t *testing.T) {
	repo := newRepo(t)
	cfg := &workspace.Config{Targets: map[string]*workspace.Target{"wordfreq": {Name: "wordfreq"}}}
	for _, tc := range []struct {
		name string
		opts EnterOptions
		code errs.Code
		want string
	}{
		{"name and path", EnterOptions{Name: "a", Path: "."}, errs.Usage, "exclude each other"},
		{"path and base", EnterOptions{Path: ".", Base: "head"}, errs.Usage, "--base applies only"},
		{"bad name", EnterOptions{Name: "../up"}, errs.Usage, "invalid worktree name"},
		{"bad base", EnterOptions{Base: "tip"}, errs.Usage, "--base must be head or fresh"},
		{"target without hone.toml", EnterOptions{Target: "wordfreq"}, errs.NotFound, "has no hone.toml"},
		{"unknown target", EnterOptions{Target: "nope", Config: cfg}, errs.NotFound, `unknown target "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Cwd = repo.Root
			_, err := Enter(context.Background(), repo, tc.opts)
			if !errs.Is(err, tc.code) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Enter: %v; want code %d saying %q", err, tc.code, tc.want)
			}
			if exists(filepath.Join(repo.Root, ManagedDir)) {
				t.Fatal("a refused enter created the managed directory")
			}
		})
	}
	t.Setenv("HONE_SESSION", "../x")
	if _, err := Enter(context.Background(), repo, EnterOptions{Cwd: repo.Root}); !errs.Is(err, errs.Usage) {
		t.Fatalf("Enter with a bad HONE_SESSION: %v; want a usage error", err)
	}
}

// An agent in a session tries to open a second worktree, which would leave
// the first untracked. It is refused; switching by path is allowed.
func TestSecondCreatingEnterIsRefused(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	first := enterNamed(t, repo, "first")
	for _, name := range []string{"second", ""} {
		_, err := Enter(ctx, repo, EnterOptions{Name: name, Cwd: repo.Root})
		if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "already in a worktree session") {
			t.Fatalf("second enter %q: %v; want a policy refusal", name, err)
		}
	}
	list, _ := List(ctx, repo)
	if len(list) != 1 || list[0].Path != first {
		t.Fatalf("worktrees after the refusals: %+v; want only the first", list)
	}
}

func TestEnterByPathRefusals(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	_, err := Enter(ctx, repo, EnterOptions{Path: t.TempDir(), Cwd: repo.Root})
	if !errs.Is(err, errs.NotFound) || !strings.Contains(err.Error(), "is not a worktree of this repository") {
		t.Fatalf("enter a plain directory: %v; want not found", err)
	}
	gone := filepath.Join(t.TempDir(), "gone")
	testgit.Git(t, repo.Root, "worktree", "add", "-q", "--detach", gone)
	os.RemoveAll(gone)
	_, err = Enter(ctx, repo, EnterOptions{Path: gone, Cwd: repo.Root})
	if !errs.Is(err, errs.NotFound) || !strings.Contains(err.Error(), "missing on disk") {
		t.Fatalf("enter a deleted worktree: %v; want not found", err)
	}
	// A detached worktree entered by a relative path.
	kept := filepath.Join(repo.Root, "..", filepath.Base(repo.Root)+"-detached")
	testgit.Git(t, repo.Root, "worktree", "add", "-q", "--detach", kept)
	t.Cleanup(func() { os.RemoveAll(kept) })
	res, err := Enter(ctx, repo, EnterOptions{Path: "../" + filepath.Base(kept), Cwd: repo.Root})
	if err != nil || res.Kind != ByPath || res.WorktreeBranch != "" || !strings.Contains(res.Message, "(detached HEAD)") {
		t.Fatalf("enter a detached worktree = %+v, %v", res, err)
	}
}

func TestNamesThatCollide(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	t.Run("a branch of that name exists", func(t *testing.T) {
		testgit.Git(t, repo.Root, "branch", "worktree-taken")
		_, err := Enter(ctx, repo, EnterOptions{Name: "taken", Cwd: repo.Root})
		if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "branch worktree-taken already exists") {
			t.Fatalf("Enter: %v; want a policy refusal naming the branch", err)
		}
	})
	t.Run("a directory that is not a worktree", func(t *testing.T) {
		testgit.WriteFiles(t, repo.Root, map[string]string{ManagedDir + "/stray/file": "x"})
		_, err := Enter(ctx, repo, EnterOptions{Name: "stray", Cwd: repo.Root})
		if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "is not a worktree of this repository") {
			t.Fatalf("Enter: %v; want a policy refusal", err)
		}
	})
	t.Run("inside another managed worktree", func(t *testing.T) {
		t.Setenv("HONE_SESSION", "outer")
		enterNamed(t, repo, "outer")
		t.Setenv("HONE_SESSION", "inner")
		_, err := Enter(ctx, repo, EnterOptions{Name: "outer/inner", Cwd: repo.Root})
		if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "would nest inside") {
			t.Fatalf("Enter: %v; want a policy refusal", err)
		}
	})
}

// Entered from inside a linked worktree, a new managed worktree still goes
// under the main worktree, never nested in the linked one.
func TestEnterFromALinkedWorktree(t *testing.T) {
	main := newRepo(t)
	t.Setenv("HONE_SESSION", "a")
	first := enterNamed(t, main, "first")
	inside, err := repo.Open(first)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HONE_SESSION", "b")
	res, err := Enter(context.Background(), inside, EnterOptions{Name: "second", Base: "head", Cwd: first})
	if err != nil {
		t.Fatal(err)
	}
	if want := managedPath(main.Root, "second"); canonical(res.WorktreePath) != canonical(want) || canonical(res.RepoRoot) != canonical(main.Root) {
		t.Fatalf("worktree at %s, root %s; want %s under the main worktree", res.WorktreePath, res.RepoRoot, want)
	}
	if res.BaseRef != "HEAD (worktree-first)" {
		t.Errorf("base %q; want the linked worktree's HEAD", res.BaseRef)
	}
}

func TestOpen(t *testing.T) {
	testgit.Setenv(t)
	_, _, err := Open(t.TempDir())
	if !errors.Is(err, ErrOutsideRepo) || !errs.Is(err, errs.Policy) {
		t.Fatalf("Open outside a repository: %v; want ErrOutsideRepo, policy", err)
	}
	plain := testgit.NewRepo(t, nil)
	repo, cfg, err := Open(plain)
	if err != nil || cfg != nil || repo.Root != plain {
		t.Fatalf("Open without hone.toml = %v, %v, %v; want the repository and no config", repo, cfg, err)
	}
	ws := testgit.NewRepo(t, map[string]string{"hone.toml": "[worktree]\nbase = \"head\"\n"})
	if _, cfg, err := Open(ws); err != nil || cfg == nil || cfg.Worktree.Base != "head" {
		t.Fatalf("Open with hone.toml = %v, %v", cfg, err)
	}
	bad := testgit.NewRepo(t, map[string]string{"hone.toml": "[worktree\n"})
	if _, _, err := Open(bad); !errs.Is(err, errs.Invalid) {
		t.Fatalf("Open with a broken hone.toml: %v; want invalid", err)
	}
}

// With its git directory elsewhere (--separate-git-dir, or a submodule's),
// git names the git directory as the main worktree. hone must not create
// worktrees inside a git directory: from a linked worktree it finds the main
// checkout through core.worktree, as submodules set it, or refuses.
func TestEnterWithASeparateGitDir(t *testing.T) {
	testgit.Setenv(t, "HONE_SESSION=")
	top, gitDir := t.TempDir(), filepath.Join(t.TempDir(), "repo.git")
	testgit.Git(t, top, "init", "-q", "-b", "main", "--separate-git-dir", gitDir)
	testgit.Git(t, top, "commit", "-q", "--allow-empty", "-m", "init")
	r, err := repo.Open(top)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Enter(context.Background(), r, EnterOptions{Name: "w", Cwd: top})
	if err != nil {
		t.Fatal(err)
	}
	if want := managedPath(top, "w"); canonical(res.WorktreePath) != canonical(want) {
		t.Fatalf("worktree at %s; want %s", res.WorktreePath, want)
	}
	inside, err := repo.Open(res.WorktreePath)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HONE_SESSION", "second")
	_, err = Enter(context.Background(), inside, EnterOptions{Name: "v", Cwd: res.WorktreePath})
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "cannot tell where the main worktree") {
		t.Fatalf("enter from a linked worktree without core.worktree: %v; want a policy refusal", err)
	}
	if exists(filepath.Join(gitDir, ManagedDir)) {
		t.Fatal("a worktree was made inside the git directory")
	}

	testgit.Git(t, top, "config", "core.worktree", top)
	res, err = Enter(context.Background(), inside, EnterOptions{Name: "v", Cwd: res.WorktreePath})
	if err != nil {
		t.Fatal(err)
	}
	if want := managedPath(top, "v"); canonical(res.WorktreePath) != canonical(want) {
		t.Fatalf("worktree made from a linked one at %s; want %s", res.WorktreePath, want)
	}
}

func TestABareRepositoryHasNoMainWorktree(t *testing.T) {
	testgit.Setenv(t, "HONE_SESSION=")
	src := testgit.NewRepo(t, nil)
	bare := filepath.Join(t.TempDir(), "bare.git")
	testgit.Git(t, src, "clone", "-q", "--bare", src, bare)
	linked := filepath.Join(t.TempDir(), "linked")
	testgit.Git(t, bare, "worktree", "add", "-q", linked)
	r, err := repo.Open(linked)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Enter(context.Background(), r, EnterOptions{Name: "w", Cwd: linked})
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "is bare and has no main worktree") {
		t.Fatalf("Enter: %v; want a policy refusal", err)
	}
	if exists(filepath.Join(bare, ManagedDir)) {
		t.Fatal("a worktree was made inside the bare repository")
	}
}
