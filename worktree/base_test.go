package worktree

import (
	"context"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/testgit"
)

// A fresh worktree starts from the default branch as the remote last showed
// it, never from a local branch that has fallen behind.
func TestFreshBaseIsTheRemoteDefaultNotAStaleLocalBranch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		local   []string // local branches, all at the old commit
		remote  []string // origin/<name> refs, at the new commit
		head    bool     // origin/HEAD -> origin/<remote[0]>
		defName string   // init.defaultBranch
		want    string   // base_ref; "" means refused as not found
	}{
		{"origin/HEAD wins", []string{"main"}, []string{"main"}, true, "", "origin/HEAD"},
		{"origin/main over a stale main", []string{"main"}, []string{"main"}, false, "", "origin/main"},
		{"the remote branch matching the local default", []string{"master"}, []string{"main", "master"}, false, "", "origin/master"},
		{"a remote default without a local one", []string{"topic"}, []string{"master"}, false, "", "origin/master"},
		{"init.defaultBranch first", []string{"trunk", "main"}, []string{"main", "trunk"}, false, "trunk", "origin/trunk"},
		{"only a local default", []string{"main"}, nil, false, "", "main"},
		{"no default branch anywhere", []string{"topic"}, []string{"topic"}, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, oldC, newC := baseRepo(t, tc.local, tc.remote, tc.head, tc.defName)
			ref, commit, err := resolveBase(context.Background(), repo, "fresh")
			if tc.want == "" {
				if !errs.Is(err, errs.NotFound) {
					t.Fatalf("resolveBase = %q, %v; want not found", ref, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := newC
			if len(tc.remote) == 0 {
				want = oldC
			}
			if ref != tc.want || commit != want {
				t.Errorf("resolveBase = %s at %.7s; want %s at %.7s", ref, commit, tc.want, want)
			}
		})
	}
}

// baseRepo makes a repository whose local branches sit at an old commit and
// whose origin/* refs sit at a newer one, and returns both commits.
func baseRepo(t *testing.T, local, remote []string, head bool, defName string) (r *repo.Repo, oldC, newC string) {
	t.Helper()
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, nil)
	git := func(args ...string) string { return testgit.Git(t, dir, args...) }
	oldC = git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "upstream")
	newC = git("rev-parse", "HEAD")
	git("checkout", "-q", "--detach", oldC)
	git("branch", "-D", "main")
	for _, b := range local {
		git("branch", b, oldC)
	}
	for _, b := range remote {
		git("update-ref", "refs/remotes/origin/"+b, newC)
	}
	if head {
		git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/"+remote[0])
	}
	if defName != "" {
		git("config", "init.defaultBranch", defName)
	}
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, oldC, newC
}
