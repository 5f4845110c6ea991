// Package testgit makes the temporary git repositories that hone's tests
// run against, with a fixed identity and no system or user configuration,
// so tests behave the same on every machine. It exists so each package's
// tests share one fixture instead of keeping their own copy.
//
// It is for _test.go files only: no non-test code may import it.
package testgit

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/repo"
)

// Env is the environment every test git runs with, as KEY=VALUE pairs.
var Env = []string{
	"GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
	"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid",
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
}

// init drops the variables with which git tells a child process which
// repository it is working on. Tests run from a git hook or `git rebase
// --exec` inherit them, and every git a test then starts, even `git init` in
// a temporary directory, would act on the developer's own repository.
// The list is `git rev-parse --local-env-vars`.
func init() {
	for _, k := range []string{
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
		"GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
		"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
		"GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
	} {
		os.Unsetenv(k)
	}
}

// Setenv applies Env, then extra (KEY=VALUE pairs), with t.Setenv, for tests
// whose code under test runs git itself.
func Setenv(t testing.TB, extra ...string) {
	t.Helper()
	for _, kv := range join(extra) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// SetenvMain applies Env, then extra, with os.Setenv: for TestMain of
// packages whose tests spawn subprocesses that must see it too.
func SetenvMain(extra ...string) {
	for _, kv := range join(extra) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
}

func join(extra []string) []string {
	return append(append([]string(nil), Env...), extra...)
}

// Cmd is a git invocation with extra environment (after Env) or input.
type Cmd struct {
	Dir   string
	Env   []string
	Stdin string
}

// Git runs git with args as c describes, failing t with git's standard
// error if it fails, and returns its trimmed standard output.
func (c Cmd) Git(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = c.Dir
	cmd.Env = append(append(os.Environ(), Env...), c.Env...)
	if c.Stdin != "" {
		cmd.Stdin = strings.NewReader(c.Stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// Git runs git with args in dir; see Cmd.Git.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return Cmd{Dir: dir}.Git(t, args...)
}

// WriteFiles writes files (slash path relative to dir -> content) under
// dir, creating parent directories.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// NewRepo makes a repository in a new temporary directory whose branch main
// has one commit holding files (which may be empty), and returns its path.
func NewRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	WriteFiles(t, dir, files)
	commitAll(t, dir)
	return dir
}

// NewRepoFS is NewRepo holding a copy of fsys.
func NewRepoFS(t testing.TB, fsys fs.FS) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
	commitAll(t, dir)
	return dir
}

// Store opens the repository at dir and returns its repo.Store: the
// implementation the conformance suite (internal/repo/repotest) checks
// against git, so what a test reads and writes through it is what hone
// itself does.
func Store(t testing.TB, dir string) repo.Store {
	t.Helper()
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r.Store("hone: test")
}

// NewStore is NewRepo with the new repository's Store.
func NewStore(t testing.TB, files map[string]string) (string, repo.Store) {
	t.Helper()
	dir := NewRepo(t, files)
	return dir, Store(t, dir)
}

func commitAll(t testing.TB, dir string) {
	t.Helper()
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
}
