package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
)

// newRepo makes a git repository with one commit holding hone.toml and a target.
func newRepo(t *testing.T, honeToml string) string {
	t.Helper()
	return testgit.NewRepo(t, map[string]string{
		"hone.toml":             honeToml,
		"targets/a/deep/main.c": "int main(void) { return 0; }\n",
	})
}

func realpath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOpenFromSubfolderAndWorktree(t *testing.T) {
	dir := newRepo(t, "[targets.a]\npin = \"main\"\n")
	head := testgit.Git(t, dir, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "linked")
	testgit.Git(t, dir, "worktree", "add", "-q", "--detach", wt)

	tests := []struct{ name, from, root string }{
		{"top level", dir, dir},
		{"subfolder", filepath.Join(dir, "targets/a/deep"), dir},
		{"linked worktree", wt, wt},
		{"linked worktree subfolder", filepath.Join(wt, "targets/a"), wt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := Open(tt.from)
			if err != nil {
				t.Fatal(err)
			}
			if realpath(t, ws.Root) != realpath(t, tt.root) {
				t.Errorf("Root = %s, want %s", ws.Root, tt.root)
			}
			if realpath(t, ws.CommonDir) != realpath(t, filepath.Join(dir, ".git")) {
				t.Errorf("CommonDir = %s, want the main .git", ws.CommonDir)
			}
			tg, err := ws.Target("a")
			if err != nil {
				t.Fatal(err)
			}
			pin, err := ws.ResolvePin(context.Background(), tg)
			if err != nil || pin != head {
				t.Errorf("ResolvePin = %q, %v; want %s", pin, err, head)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	t.Run("no hone.toml", func(t *testing.T) {
		dir := t.TempDir()
		testgit.Git(t, dir, "init", "-q")
		_, err := Open(dir)
		if errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), "hone init") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unknown target lists known ones", func(t *testing.T) {
		ws, err := Open(newRepo(t, "[targets.a]\n[targets.b]\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ws.Target("c")
		if errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), "known targets: a, b") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("pin that does not resolve", func(t *testing.T) {
		ws, err := Open(newRepo(t, "[targets.a]\n\npin = \"no-such-branch\"\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ws.ResolvePin(context.Background(), ws.Config.Targets["a"])
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), "hone.toml:3: targets.a.pin:") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("path through a symlink out of the repository", func(t *testing.T) {
		dir := newRepo(t, "[targets.x]\npath = \"out/x\"\n")
		if err := os.Symlink(t.TempDir(), filepath.Join(dir, "out")); err != nil {
			t.Fatal(err)
		}
		_, err := Open(dir)
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), "hone.toml:2: targets.x.path:") || !strings.Contains(err.Error(), "leaves the repository") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("symlink inside the repository is fine", func(t *testing.T) {
		dir := newRepo(t, "[targets.x]\npath = \"alias/a\"\n")
		if err := os.Symlink("targets", filepath.Join(dir, "alias")); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir); err != nil {
			t.Errorf("err = %v", err)
		}
	})
}

func TestResolvePinAnnotatedTag(t *testing.T) {
	dir := newRepo(t, "[targets.a]\npin = \"v1\"\n")
	testgit.Git(t, dir, "tag", "-a", "-m", "release", "v1")
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	pin, err := ws.ResolvePin(context.Background(), ws.Config.Targets["a"])
	if want := testgit.Git(t, dir, "rev-parse", "HEAD"); err != nil || pin != want {
		t.Errorf("ResolvePin = %q, %v; want %s", pin, err, want)
	}
}

// The allowlist items of a real project: files globs are checked against
// the pin's tree, and a path that names a file is an error wherever it is
// found, each with the hone.toml line to fix.
func TestTargetMustFitThePinsTree(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"lib/json.c": "int parse;\n", "lib/json.h": "int parse;\n", "lib/test/t.c": "int t;\n",
		"single.c": "int s;\n",
	}
	tests := []struct {
		name, toml string
		want       string // "" when ResolvePin must succeed
	}{
		{"files naming existing files", "[targets.j]\npath = \"lib\"\nfiles = [\"json.c\", \"json.h\", \"test/**\"]\n", ""},
		{"a files glob naming nothing", "[targets.j]\npath = \"lib\"\n\nfiles = [\"json.c\", \"parser.c\"]\n", `hone.toml:4: targets.j.files: pattern "parser.c" matches no file under lib at commit `},
		{"a directory without /**", "[targets.j]\npath = \"lib\"\nfiles = [\"test\"]\n", `pattern "test" matches no file under lib`},
		{"case matters", "[targets.j]\npath = \"lib\"\nfiles = [\"JSON.c\"]\n", `pattern "JSON.c" matches no file`},
		{"files under a path the pin lacks", "[targets.j]\npath = \"lib/new\"\nfiles = [\"a.c\"]\n", `hone.toml:3: targets.j.files: pattern "a.c" matches no file at commit `},
		{"a path the pin lacks, without files", "[targets.j]\npath = \"lib/new\"\n", ""},
		{"a path through a file", "[targets.j]\npath = \"single.c/x\"\n", `hone.toml:2: targets.j.path: "single.c" is not a directory in commit `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := map[string]string{"hone.toml": tt.toml}
			for k, v := range files {
				all[k] = v
			}
			ws, err := Open(testgit.NewRepo(t, all))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ws.ResolvePin(ctx, ws.Config.Targets["j"])
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ResolvePin: %v", err)
				}
				return
			}
			if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ResolvePin: %v\nwant an Invalid error containing %q", err, tt.want)
			}
		})
	}
}

func TestPathNamingAFileIsRefused(t *testing.T) {
	t.Run("in the working tree", func(t *testing.T) {
		dir := testgit.NewRepo(t, map[string]string{"hone.toml": "[targets.j]\npath = \"json.c\"\n", "json.c": "int x;\n"})
		_, err := Open(dir)
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), `hone.toml:2: targets.j.path: "json.c" is not a directory in the working tree`) {
			t.Fatalf("Open: %v", err)
		}
	})
	t.Run("at the pin", func(t *testing.T) {
		dir := testgit.NewRepo(t, map[string]string{"hone.toml": "[targets.j]\npath = \"src\"\npin = \"old\"\n", "src": "a file, then a directory\n"})
		testgit.Git(t, dir, "branch", "old")
		testgit.Git(t, dir, "rm", "-q", "src")
		testgit.WriteFiles(t, dir, map[string]string{"src/json.c": "int x;\n"})
		testgit.Git(t, dir, "add", ".")
		testgit.Git(t, dir, "commit", "-q", "-m", "src becomes a directory")
		ws, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ws.ResolvePin(context.Background(), ws.Config.Targets["j"])
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), `hone.toml:2: targets.j.path: "src" is not a directory in commit `) {
			t.Fatalf("ResolvePin: %v", err)
		}
	})
}

// A read_only path that would show jailed commands the repository's git
// directory or hone's state, or the user's HOME, is a hone.toml error.
func TestReadOnlyCannotExposeTheRepository(t *testing.T) {
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, map[string]string{"hone.toml": "[targets.a]\n"})
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, ro := range []string{filepath.Dir(dir), filepath.Join(dir, ".git", "hone"), filepath.Join(dir, ".git"), filepath.Dir(home)} {
		os.WriteFile(filepath.Join(dir, "hone.toml"), []byte("[sandbox]\nread_only = [\""+ro+"\"]\n[targets.a]\n"), 0o644)
		_, err := Open(dir)
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), "hone.toml:2: sandbox.read_only") {
			t.Errorf("read_only %s: %v", ro, err)
		}
	}
	os.WriteFile(filepath.Join(dir, "hone.toml"), []byte("[sandbox]\nread_only = [\"/opt/toolchain\"]\n[targets.a]\n"), 0o644)
	if _, err := Open(dir); err != nil {
		t.Errorf("a toolchain folder: %v", err)
	}
}
