package repotest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/repo"
)

// gitTree builds, with git's own commands, a commit whose tree holds a
// file, an executable, a symlink and a nested directory, and returns it.
func gitTree(t *testing.T, s repo.Store) repo.Hash {
	t.Helper()
	blob := func(content string) string { return gitOut(t, s, content, "hash-object", "-w", "--stdin") }
	inner := gitOut(t, s, "100644 blob "+blob("deep\n")+"\tleaf.c\n", "mktree")
	dir := gitOut(t, s, "040000 tree "+inner+"\tsub\n100644 blob "+blob("x\n")+"\tx.c\n", "mktree")
	root := gitOut(t, s, strings.Join([]string{
		"100644 blob " + blob("[targets.a]\n") + "\thone.toml",
		"100755 blob " + blob("#!/bin/sh\n") + "\trun.sh",
		"120000 blob " + blob("x.c") + "\tlink",
		"040000 tree " + dir + "\tsrc",
	}, "\n")+"\n", "mktree")
	first := gitOut(t, s, "", "commit-tree", root, "-m", "first")
	second := gitOut(t, s, "", "commit-tree", root, "-p", first, "-m", "second\n\nbody")
	gitOut(t, s, "", "update-ref", "refs/heads/main", second)
	return repo.NewHash(second)
}

// readsCommitsAndTrees: ReadCommit and ReadTree decode what git wrote as
// git reads it (cat-file, ls-tree), and ObjectSize is git's size.
func readsCommitsAndTrees(t *testing.T, s repo.Store) {
	h := gitTree(t, s)
	c, err := s.ReadCommit(h)
	if err != nil {
		t.Fatalf("ReadCommit: %v", err)
	}
	if want := gitOut(t, s, "", "rev-parse", h.String()+"^{tree}"); c.Tree.String() != want {
		t.Errorf("Tree = %s, git says %s", c.Tree, want)
	}
	if want := gitOut(t, s, "", "rev-parse", h.String()+"^"); len(c.Parents) != 1 || c.Parents[0].String() != want {
		t.Errorf("Parents = %v, git says [%s]", c.Parents, want)
	}
	got := fmt.Sprintf("%s|%s <%s> %d|%s <%s> %d", c.Message, c.Author.Name, c.Author.Email, c.Author.When.Unix(), c.Committer.Name, c.Committer.Email, c.Committer.When.Unix())
	if want := gitOut(t, s, "", "log", "-1", "--format=%B|%an <%ae> %at|%cn <%ce> %ct", h.String()); c.Hash != h || got != want {
		t.Errorf("ReadCommit = %q, git log says %q", got, want)
	}
	entries, err := s.ReadTree(c.Tree)
	if err != nil {
		t.Fatalf("ReadTree: %v", err)
	}
	var listed []string
	for _, e := range entries {
		listed = append(listed, fmt.Sprintf("%06o %s\t%s", uint32(e.Mode), e.Hash, e.Name))
	}
	if want := gitOut(t, s, "", "ls-tree", "--format=%(objectmode) %(objectname)%x09%(path)", c.Tree.String()); strings.Join(listed, "\n") != want {
		t.Errorf("ReadTree =\n%s\ngit ls-tree =\n%s", strings.Join(listed, "\n"), want)
	}
	for _, e := range entries {
		if e.Mode == repo.ModeDir {
			continue
		}
		size, err := s.ObjectSize(repo.BlobObject, e.Hash)
		if err != nil || strconv.FormatInt(size, 10) != gitOut(t, s, "", "cat-file", "-s", e.Hash.String()) {
			t.Errorf("ObjectSize(%s) = %d, %v", e.Name, size, err)
		}
	}
	if _, err := s.ReadTree(h); err == nil {
		t.Errorf("ReadTree of a commit succeeded")
	}
	if _, err := s.ReadCommit(c.Tree); err == nil {
		t.Errorf("ReadCommit of a tree succeeded")
	}
	if _, err := s.ObjectSize(repo.BlobObject, repo.NewHash(strings.Repeat("cd", 20))); !errors.Is(err, repo.ErrNoObject) {
		t.Errorf("ObjectSize of a missing object = %v, want ErrNoObject", err)
	}
}

// pathsInTrees: EntryAt, WalkTree and FileAt over the Store agree with
// git's own reading of paths (rev-parse <commit>:<path>, ls-tree -r -t).
func pathsInTrees(t *testing.T, s repo.Store) {
	h := gitTree(t, s)
	c, err := s.ReadCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"hone.toml", "src", "src/sub/leaf.c", "link", "run.sh"} {
		e, err := repo.EntryAt(s, c.Tree, p)
		if want := gitOut(t, s, "", "rev-parse", h.String()+":"+p); err != nil || e.Hash.String() != want {
			t.Errorf("EntryAt(%s) = %v, %v; git says %s", p, e.Hash, err, want)
		}
	}
	for _, p := range []string{"nope", "src/nope", "hone.toml/x", "link/x", "src/sub/leaf.c/x"} {
		if _, err := repo.EntryAt(s, c.Tree, p); !errors.Is(err, repo.ErrNoEntry) {
			t.Errorf("EntryAt(%s) = %v, want ErrNoEntry", p, err)
		}
	}
	var walked []string
	err = repo.WalkTree(s, c.Tree, func(p string, e repo.TreeEntry) error {
		walked = append(walked, e.Hash.String()+" "+p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(gitOut(t, s, "", "ls-tree", "-r", "-t", c.Tree.String()), "\n") {
		meta, p, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		want = append(want, f[2]+" "+p)
	}
	slices.Sort(walked)
	slices.Sort(want)
	if !slices.Equal(walked, want) {
		t.Errorf("WalkTree =\n%s\ngit ls-tree -r -t =\n%s", strings.Join(walked, "\n"), strings.Join(want, "\n"))
	}
	stop := errors.New("stop")
	n := 0
	if err := repo.WalkTree(s, c.Tree, func(string, repo.TreeEntry) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("WalkTree after fn's error: %v after %d calls", err, n)
	}
	e, b, err := repo.FileAt(s, h, "src/sub/leaf.c")
	if err != nil || string(b) != "deep\n" || e.Mode != repo.ModeRegular {
		t.Errorf("FileAt(src/sub/leaf.c) = %+v %q %v", e, b, err)
	}
	if _, _, err := repo.FileAt(s, h, "src"); !errors.Is(err, repo.ErrNoEntry) {
		t.Errorf("FileAt of a directory = %v, want ErrNoEntry", err)
	}
}

// writesTrees: a tree EncodeTree makes and the Store writes is one git
// lists and fsck accepts.
func writesTrees(t *testing.T, s repo.Store) {
	blob := write(t, s, repo.BlobObject, []byte("b\n"))
	sub, err := repo.EncodeTree([]repo.TreeEntry{{Name: "f", Mode: repo.ModeExecutable, Hash: blob}})
	if err != nil {
		t.Fatal(err)
	}
	subH := write(t, s, repo.TreeObject, sub)
	top, err := repo.EncodeTree([]repo.TreeEntry{{Name: "a", Mode: repo.ModeRegular, Hash: blob}, {Name: "d", Mode: repo.ModeDir, Hash: subH}})
	if err != nil {
		t.Fatal(err)
	}
	topH := write(t, s, repo.TreeObject, top)
	if got, want := gitOut(t, s, "", "ls-tree", "-r", topH.String()), "100644 blob "+blob.String()+"\ta\n100755 blob "+blob.String()+"\td/f"; got != want {
		t.Errorf("git ls-tree -r = %q, want %q", got, want)
	}
	commit := write(t, s, repo.CommitObject, commitBytes(topH, nil, "trees"))
	gitOut(t, s, "", "update-ref", "refs/heads/trees", commit.String())
	gitOut(t, s, "", "fsck", "--strict", "--no-dangling")
	if _, err := repo.EncodeTree([]repo.TreeEntry{{Name: "b", Mode: repo.ModeRegular, Hash: blob}, {Name: "a", Mode: repo.ModeRegular, Hash: blob}}); err == nil {
		t.Errorf("EncodeTree of entries out of git's order succeeded")
	}
}

// resolvesRevisions: ResolveCommit reads what git's rev-parse does,
// annotated tags peeled; Symref reads HEAD and a remote's HEAD.
func resolvesRevisions(t *testing.T, s repo.Store) {
	h := gitTree(t, s)
	gitOut(t, s, "", "-c", "user.name=t", "-c", "user.email=t@hone.invalid", "tag", "-a", "-m", "v1", "v1", h.String())
	gitOut(t, s, "", "symbolic-ref", "HEAD", "refs/heads/main")
	for _, rev := range []string{"main", "refs/heads/main", "HEAD", "v1", "main~1", h.String()[:12]} {
		got, err := s.ResolveCommit(ctx, rev)
		if want := gitOut(t, s, "", "rev-parse", rev+"^{commit}"); err != nil || got.String() != want {
			t.Errorf("ResolveCommit(%s) = %s, %v; git says %s", rev, got, err, want)
		}
	}
	for _, rev := range []string{"nope", "main~5", strings.Repeat("ef", 20)} {
		if _, err := s.ResolveCommit(ctx, rev); !errors.Is(err, repo.ErrNoCommit) {
			t.Errorf("ResolveCommit(%s) = %v, want ErrNoCommit", rev, err)
		}
	}
	if target, ok, err := s.Symref("HEAD"); err != nil || !ok || target != "refs/heads/main" {
		t.Errorf("Symref(HEAD) = %q %v %v", target, ok, err)
	}
	gitOut(t, s, "", "update-ref", "refs/remotes/origin/main", h.String())
	gitOut(t, s, "", "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	if target, ok, err := s.Symref("refs/remotes/origin/HEAD"); err != nil || !ok || target != "refs/remotes/origin/main" {
		t.Errorf("Symref(origin/HEAD) = %q %v %v", target, ok, err)
	}
	for _, ref := range []string{"refs/heads/main", "refs/heads/nope"} {
		if target, ok, err := s.Symref(ref); err != nil || ok {
			t.Errorf("Symref(%s) = %q %v %v, want not symbolic", ref, target, ok, err)
		}
	}
}

// readsConfig: Config reads what `git config` wrote in the repository.
func readsConfig(t *testing.T, s repo.Store) {
	if v := s.Config("hone.signingkey"); v != "" {
		t.Fatalf("hone.signingkey in a fresh repository = %q", v)
	}
	gitOut(t, s, "", "config", "hone.signingKey", "~/.ssh/id_hone")
	if v := s.Config("hone.signingkey"); v != "~/.ssh/id_hone" {
		t.Errorf("Config(hone.signingkey) = %q, want what git config set", v)
	}
}
