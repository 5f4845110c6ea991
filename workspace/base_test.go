package workspace

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/testgit"
)

// An agent in a linked worktree widens its target in that worktree's
// hone.toml and even commits the change on its own branch: the protected
// base is still the default branch's pin, and the rules are read there.
func TestProtectedBaseIgnoresAnAgentsBranchAndWorkingTree(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, "[targets.a]\npath = \"targets/a\"\npin = \"main\"\nprotect = [\"deep/**\"]\n")
	main := testgit.Git(t, dir, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	testgit.Git(t, dir, "worktree", "add", "-q", "-b", "worktree-x", wt)
	testgit.WriteFiles(t, wt, map[string]string{"hone.toml": "[targets.a]\npath = \"targets\"\npin = \"worktree-x\"\n"})
	testgit.Git(t, wt, "commit", "-qam", "widen")
	testgit.WriteFiles(t, wt, map[string]string{"hone.toml": "[targets.a]\npath = \".\"\n"})
	r, err := repo.Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ProtectedBase(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	a := b.Config.Targets["a"]
	if !reflect.DeepEqual(b.Refs, []string{"refs/heads/main"}) || b.Commit != main || a.Path != "targets/a" || len(a.Protect) != 1 {
		t.Fatalf("base %v at %s, target %+v", b.Refs, b.Commit, a)
	}
}

func TestProtectedBaseRefs(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, toml string
		want       func(dir string) []string
	}{
		{"guard base wins", "[guard]\nbase = [\"refs/heads/release\", \"refs/heads/main\"]\n[targets.a]\npin = \"main\"\n",
			func(string) []string { return []string{"refs/heads/release", "refs/heads/main"} }},
		{"a tag pin protects its commit", "[targets.a]\npin = \"v1\"\n[targets.b]\npin = \"main\"\n",
			func(dir string) []string {
				return []string{testgit.Git(t, dir, "rev-parse", "v1^{commit}"), "refs/heads/main"}
			}},
		{"no pin: the default branch", "", func(string) []string { return []string{"refs/heads/main"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := newRepo(t, c.toml)
			testgit.Git(t, dir, "tag", "-a", "-m", "v1", "v1")
			r, err := repo.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ProtectedBase(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.want(dir); !reflect.DeepEqual(b.Refs, want) {
				t.Fatalf("refs %v, want %v", b.Refs, want)
			}
			// release does not exist: the rules come from the next base ref.
			if b.Ref == "refs/heads/release" {
				t.Fatalf("read the rules at a ref that does not exist")
			}
		})
	}
}
