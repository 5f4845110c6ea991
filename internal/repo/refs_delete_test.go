package repo_test

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/testgit"
)

// Delete follows git's files backend: the ref is gone for git too, loose or
// packed, and only when it still holds the expected value.
func TestDeleteLooseAndPackedRefs(t *testing.T) {
	dir := testgit.NewRepo(t, map[string]string{"a": "1\n"})
	head := plumbing.NewHash(testgit.Git(t, dir, "rev-parse", "HEAD"))
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	refs := r.Refs()
	for _, name := range []string{"refs/hone/patches/loose", "refs/hone/patches/packed", "refs/hone/patches/kept"} {
		if err := refs.CompareAndSwap(ctx, name, head, plumbing.ZeroHash); err != nil {
			t.Fatal(err)
		}
	}
	testgit.Git(t, dir, "tag", "-a", "-m", "peeled", "v1")
	testgit.Git(t, dir, "pack-refs", "--all")
	// A loose value over the packed one, as after an update of a packed ref.
	if err := refs.CompareAndSwap(ctx, "refs/hone/patches/loose", head, head); err != nil {
		t.Fatal(err)
	}
	if err := refs.Delete(ctx, "refs/hone/patches/packed", plumbing.NewHash("1111111111111111111111111111111111111111")); !errors.Is(err, repo.ErrRaceLost) {
		t.Fatalf("Delete with a stale old value: %v; want a lost race", err)
	}
	for _, name := range []string{"refs/hone/patches/loose", "refs/hone/patches/packed"} {
		if err := refs.Delete(ctx, name, head); err != nil {
			t.Fatalf("Delete %s: %v", name, err)
		}
		if _, ok, err := refs.Read(name); err != nil || ok {
			t.Errorf("%s still reads as present: %v", name, err)
		}
	}
	if err := refs.Delete(ctx, "refs/hone/patches/packed", head); !errors.Is(err, repo.ErrRaceLost) {
		t.Fatalf("Delete of an absent ref: %v; want a lost race", err)
	}
	got := testgit.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/hone/", "refs/tags/")
	if got != "refs/hone/patches/kept\nrefs/tags/v1" {
		t.Errorf("refs after the deletes:\n%s", got)
	}
	testgit.Git(t, dir, "fsck", "--strict")
}
