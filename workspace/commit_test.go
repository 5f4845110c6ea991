package workspace

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

// An agent widens its target in the working tree's hone.toml; what an older
// commit says is still what LoadAt reads, with the blob id git has for it.
func TestLoadAtIgnoresTheWorkingTree(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, "[targets.a]\npath = \"targets/a\"\nprotect = [\"deep/**\"]\n")
	first := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.WriteFiles(t, dir, map[string]string{"hone.toml": "[targets.a]\npath = \"targets\"\n\n[targets.b]\n"})
	testgit.Git(t, dir, "commit", "-qam", "second")
	testgit.WriteFiles(t, dir, map[string]string{"hone.toml": "[targets.a]\npath = \"targets/a/deep\"\nprotect = []\n"})
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadAt(ctx, r, first)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Target("a")
	if err != nil {
		t.Fatal(err)
	}
	if c.Commit != first || a.Path != "targets/a" || len(a.Protect) != 1 || a.Protect[0] != "deep/**" {
		t.Errorf("LoadAt(first) = commit %s, target %+v", c.Commit, a)
	}
	if want := testgit.Git(t, dir, "rev-parse", first+":hone.toml"); c.Blob != want {
		t.Errorf("Blob = %s, want %s", c.Blob, want)
	}
	if _, err := c.Target("b"); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("target b at the first commit: %v; want not found", err)
	}
	head, err := LoadAt(ctx, r, "HEAD~0")
	if err != nil {
		t.Fatal(err)
	}
	if head.Config.Targets["a"].Path != "targets" || head.Config.Targets["b"] == nil {
		t.Errorf("LoadAt(HEAD) read %+v, not the second commit", head.Config.Targets)
	}
	if ws, err := Open(dir); err != nil || ws.Config.Targets["a"].Path != "targets/a/deep" {
		t.Fatalf("the working tree's own file: %v", err)
	}
}

func TestLoadAtErrorsNameTheCommit(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, "[targets.a]\n\npin = 5\n")
	short := testgit.Git(t, dir, "rev-parse", "--short=12", "HEAD")
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadAt(ctx, r, "main")
	if errs.CodeOf(err) != errs.Invalid || !strings.HasPrefix(err.Error(), short+":hone.toml:3: targets.a.pin: wrong type") {
		t.Errorf("bad hone.toml at a commit: %v", err)
	}
	if _, err := LoadAt(ctx, r, "no-such-ref"); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("unknown revision: %v", err)
	}
	testgit.Git(t, dir, "rm", "-q", "hone.toml")
	testgit.Git(t, dir, "commit", "-qm", "no config")
	if _, err := LoadAt(ctx, r, "HEAD"); errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), "has no hone.toml") {
		t.Errorf("commit without hone.toml: %v", err)
	}
	if err := os.Symlink("elsewhere.toml", filepath.Join(dir, "hone.toml")); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, dir, "add", "hone.toml")
	testgit.Git(t, dir, "commit", "-qm", "a symlink")
	if _, err := LoadAt(ctx, r, "HEAD"); errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("hone.toml as a symlink: %v", err)
	}
}
