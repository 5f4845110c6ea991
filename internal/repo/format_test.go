package repo_test

import (
	"errors"
	"github.com/hone-perf/hone/internal/repo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
)

// initWith makes a repository with `git init args...`, or skips the case
// when this git cannot make one (too old for the format).
func initWith(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("git", append([]string{"init", "-q"}, append(args, dir)...)...)
	cmd.Env = append(os.Environ(), testgit.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("this git cannot make a repository with %q: %v: %s", args, err, out)
	}
	return dir
}

// A repository whose objects or refs hone's own readers and writers would
// get wrong is refused by Open and OpenBare with one line, before hone
// writes anything into it; the extensions hone works under are accepted.
func TestUnsupportedRepositoriesAreRefused(t *testing.T) {
	refused := []struct {
		name string
		dir  func(t *testing.T) string
		want string
	}{
		{"sha256 objects", func(t *testing.T) string { return initWith(t, "--object-format=sha256") }, "extensions.objectformat = sha256"},
		{"reftable refs", func(t *testing.T) string { return initWith(t, "--ref-format=reftable") }, "extensions.refstorage = reftable"},
		{"partial clone", func(t *testing.T) string {
			dir := initWith(t)
			testgit.Git(t, dir, "config", "core.repositoryformatversion", "1")
			testgit.Git(t, dir, "config", "extensions.partialClone", "origin")
			return dir
		}, "extensions.partialClone = origin"},
		{"worktree config", func(t *testing.T) string {
			dir := initWith(t)
			testgit.Git(t, dir, "config", "extensions.worktreeConfig", "true")
			return dir
		}, "extensions.worktreeConfig = true"},
		{"format version 2", func(t *testing.T) string {
			dir := initWith(t)
			testgit.Git(t, dir, "config", "core.repositoryformatversion", "2")
			return dir
		}, "core.repositoryformatversion = 2"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir(t)
			_, err := repo.Open(dir)
			if errs.CodeOf(err) != errs.Failure || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Open = %v (code %d); want one line naming %q, exit 1", err, errs.CodeOf(err), c.want)
			}
			if _, err := repo.OpenBare(filepath.Join(dir, ".git")); errs.CodeOf(err) != errs.Failure {
				t.Fatalf("OpenBare = %v; want the same refusal", err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "hone")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("hone's state directory exists after the refusal: %v", err)
			}
		})
	}
	t.Run("noop extension", func(t *testing.T) {
		dir := initWith(t)
		testgit.Git(t, dir, "config", "core.repositoryformatversion", "1")
		testgit.Git(t, dir, "config", "extensions.noop", "true")
		if _, err := repo.Open(dir); err != nil {
			t.Fatalf("Open of a repository with extensions.noop: %v", err)
		}
	})
}
