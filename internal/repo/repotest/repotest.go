// Package repotest is the conformance suite of repo.Store: what every
// implementation must do, checked against git itself. An implementation's
// test calls Run with a function that makes a Store over a fresh repository;
// the suite then reads and writes through the Store and asks the git binary
// (through the Store's own Git) whether git agrees.
//
// It imports testing, so only tests may import it.
package repotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// NewStore returns a Store over a fresh, empty, non-bare repository (git
// init'ed, no commits), removed when t ends.
type NewStore func(t *testing.T) repo.Store

// Run runs every case of the suite, each on a store of its own.
func Run(t *testing.T, newStore NewStore) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, repo.Store)
	}{
		{"Objects", objects},
		{"ObjectsGitWrote", objectsGitWrote},
		{"CommitsAndTrees", commitsAndTrees},
		{"RefCreateUpdateDelete", refCAS},
		{"RefsGitMoved", refsGitMoved},
		{"ConcurrentWriters", concurrentWriters},
		{"RunsGit", runsGit},
		{"ReadsCommitsAndTrees", readsCommitsAndTrees},
		{"PathsInTrees", pathsInTrees},
		{"WritesTrees", writesTrees},
		{"ResolvesRevisions", resolvesRevisions},
		{"ReadsConfig", readsConfig},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

var ctx = context.Background()

// gitOut runs git through s and returns its output, trimmed.
func gitOut(t *testing.T, s repo.Store, stdin string, args ...string) string {
	t.Helper()
	out, err := s.Git(ctx, git.Cmd{Args: args, Stdin: strings.NewReader(stdin)})
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, s repo.Store, typ plumbing.ObjectType, data []byte) plumbing.Hash {
	t.Helper()
	h, err := s.WriteObject(typ, data)
	if err != nil {
		t.Fatalf("WriteObject(%s): %v", typ, err)
	}
	return h
}

func read(t *testing.T, s repo.Store, typ plumbing.ObjectType, h plumbing.Hash) []byte {
	t.Helper()
	b, err := s.ReadObject(typ, h)
	if err != nil {
		t.Fatalf("ReadObject(%s %s): %v", typ, h, err)
	}
	return b
}

// objects: what the Store writes has git's id, reads back byte for byte,
// and is what git reads; a missing object, or one asked for as the wrong
// type, is an error, ErrNoObject when absent.
func objects(t *testing.T, s repo.Store) {
	for _, content := range []string{"", "hello\n", strings.Repeat("ledger\x00entry\n", 9000)} {
		h := write(t, s, plumbing.BlobObject, []byte(content))
		if want := gitOut(t, s, content, "hash-object", "--stdin"); h.String() != want {
			t.Fatalf("WriteObject gave %s, git hash-object %s", h, want)
		}
		if got := read(t, s, plumbing.BlobObject, h); !bytes.Equal(got, []byte(content)) {
			t.Fatalf("ReadObject(%s) = %d bytes, want %d", h, len(got), len(content))
		}
		if size := gitOut(t, s, "", "cat-file", "-s", h.String()); size != fmt.Sprint(len(content)) {
			t.Fatalf("git cat-file -s %s = %s, want %d", h, size, len(content))
		}
		if again := write(t, s, plumbing.BlobObject, []byte(content)); again != h {
			t.Fatalf("writing the same blob twice gave %s and %s", h, again)
		}
	}
	missing := plumbing.NewHash(strings.Repeat("ab", 20))
	if _, err := s.ReadObject(plumbing.BlobObject, missing); !errors.Is(err, repo.ErrNoObject) {
		t.Fatalf("ReadObject of a missing object = %v, want ErrNoObject", err)
	}
	blob := write(t, s, plumbing.BlobObject, []byte("a blob\n"))
	if _, err := s.ReadObject(plumbing.CommitObject, blob); err == nil {
		t.Fatalf("ReadObject of a blob as a commit succeeded")
	}
	gitOut(t, s, "", "fsck", "--strict", "--no-dangling")
}

// objectsGitWrote: objects git wrote, loose and then packed, read back
// through the Store.
func objectsGitWrote(t *testing.T, s repo.Store) {
	blob := plumbing.NewHash(gitOut(t, s, "from git\n", "hash-object", "-w", "--stdin"))
	tree := plumbing.NewHash(gitOut(t, s, "100644 blob "+blob.String()+"\tf\n", "mktree"))
	commit := plumbing.NewHash(gitOut(t, s, "", "commit-tree", tree.String(), "-m", "by git"))
	gitOut(t, s, "", "update-ref", "refs/heads/main", commit.String())
	check := func(when string) {
		t.Helper()
		if got := read(t, s, plumbing.BlobObject, blob); string(got) != "from git\n" {
			t.Fatalf("%s: blob reads %q", when, got)
		}
		if got, want := read(t, s, plumbing.CommitObject, commit), gitOut(t, s, "", "cat-file", "commit", commit.String()); strings.TrimSpace(string(got)) != want {
			t.Fatalf("%s: commit reads %q, git says %q", when, got, want)
		}
		if got := read(t, s, plumbing.TreeObject, tree); !bytes.Contains(got, blob[:]) {
			t.Fatalf("%s: tree %s does not name blob %s", when, tree, blob)
		}
	}
	check("loose")
	gitOut(t, s, "", "repack", "-a", "-d", "-q")
	gitOut(t, s, "", "prune-packed")
	check("packed")
}

// commitsAndTrees: a tree and commits the Store writes are ones git reads
// and checks, with the tree and parents they name.
func commitsAndTrees(t *testing.T, s repo.Store) {
	blob := write(t, s, plumbing.BlobObject, []byte("entry\n"))
	tree := write(t, s, plumbing.TreeObject, append([]byte("100644 entry.toml\x00"), blob[:]...))
	if got := gitOut(t, s, "", "ls-tree", tree.String()); got != "100644 blob "+blob.String()+"\tentry.toml" {
		t.Fatalf("git ls-tree of the written tree = %q", got)
	}
	first := write(t, s, plumbing.CommitObject, commitBytes(tree, nil, "first"))
	second := write(t, s, plumbing.CommitObject, commitBytes(tree, []plumbing.Hash{first}, "second"))
	if got := gitOut(t, s, "", "rev-list", second.String()); got != second.String()+"\n"+first.String() {
		t.Fatalf("git rev-list of the written commits = %q", got)
	}
	if got := gitOut(t, s, "", "rev-parse", second.String()+"^{tree}"); got != tree.String() {
		t.Fatalf("git reads the commit's tree as %s, want %s", got, tree)
	}
	if got := read(t, s, plumbing.CommitObject, second); !bytes.Contains(got, []byte("parent "+first.String()+"\n")) {
		t.Fatalf("ReadObject of the second commit = %q, want its parent", got)
	}
	gitOut(t, s, "", "fsck", "--strict", "--no-dangling")
}

// commitBytes is a commit in git's format with a fixed identity and date.
func commitBytes(tree plumbing.Hash, parents []plumbing.Hash, msg string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author hone <hone@test.invalid> 1700000000 +0000\ncommitter hone <hone@test.invalid> 1700000000 +0000\n\n%s\n", msg)
	return b.Bytes()
}

// emptyCommit writes a commit of the empty tree.
func emptyCommit(t *testing.T, s repo.Store, parents []plumbing.Hash, msg string) plumbing.Hash {
	t.Helper()
	tree := write(t, s, plumbing.TreeObject, nil)
	return write(t, s, plumbing.CommitObject, commitBytes(tree, parents, msg))
}

func readRef(t *testing.T, s repo.Store, ref string) (plumbing.Hash, bool) {
	t.Helper()
	h, ok, err := s.Read(ref)
	if err != nil {
		t.Fatalf("Read(%s): %v", ref, err)
	}
	return h, ok
}

// refCAS: create-only with the zero old value, update from the right old
// value only, delete from the right old value only; git sees every move.
func refCAS(t *testing.T, s repo.Store) {
	const ref = "refs/hone/test"
	zero := plumbing.ZeroHash
	a := emptyCommit(t, s, nil, "a")
	b := emptyCommit(t, s, []plumbing.Hash{a}, "b")
	if _, ok := readRef(t, s, ref); ok {
		t.Fatalf("%s exists in a fresh repository", ref)
	}
	if err := s.CompareAndSwap(ctx, ref, a, zero); err != nil {
		t.Fatalf("create-only CompareAndSwap: %v", err)
	}
	if err := s.CompareAndSwap(ctx, ref, b, zero); !errors.Is(err, repo.ErrRaceLost) {
		t.Fatalf("a second create-only CompareAndSwap = %v, want ErrRaceLost", err)
	}
	if err := s.CompareAndSwap(ctx, ref, a, b); !errors.Is(err, repo.ErrRaceLost) {
		t.Fatalf("CompareAndSwap from a value the ref does not hold = %v, want ErrRaceLost", err)
	}
	if h, _ := readRef(t, s, ref); h != a {
		t.Fatalf("after the lost races %s = %s, want %s", ref, h, a)
	}
	if err := s.CompareAndSwap(ctx, ref, b, a); err != nil {
		t.Fatalf("CompareAndSwap from the held value: %v", err)
	}
	if got := gitOut(t, s, "", "rev-parse", "--verify", ref); got != b.String() {
		t.Fatalf("git reads %s as %s, want %s", ref, got, b)
	}
	if err := s.Delete(ctx, ref, a); !errors.Is(err, repo.ErrRaceLost) {
		t.Fatalf("Delete from a value the ref does not hold = %v, want ErrRaceLost", err)
	}
	if err := s.Delete(ctx, ref, b); err != nil {
		t.Fatalf("Delete from the held value: %v", err)
	}
	if _, ok := readRef(t, s, ref); ok {
		t.Fatalf("%s still exists after Delete", ref)
	}
	if out, err := s.Git(ctx, git.Cmd{Args: []string{"show-ref", "--verify", "--quiet", ref}}); err == nil {
		t.Fatalf("git still sees %s after Delete: %s", ref, out)
	}
	if err := s.Delete(ctx, ref, b); !errors.Is(err, repo.ErrRaceLost) {
		t.Fatalf("Delete of an absent ref = %v, want ErrRaceLost", err)
	}
	// A branch's moves are in its reflog, as git records its own.
	const branch = "refs/heads/logged"
	if err := s.CompareAndSwap(ctx, branch, a, zero); err != nil {
		t.Fatal(err)
	}
	if err := s.CompareAndSwap(ctx, branch, b, a); err != nil {
		t.Fatal(err)
	}
	log, err := s.Reflog(branch)
	if err != nil || len(log) != 2 || log[0].Old != zero || log[0].New != a || log[1].Old != a || log[1].New != b {
		t.Fatalf("Reflog(%s) = %+v, %v; want the two moves", branch, log, err)
	}
}

// refsGitMoved: refs git wrote, loose and packed, are read, moved and
// deleted through the Store, and a packed value never comes back.
func refsGitMoved(t *testing.T, s repo.Store) {
	const ref = "refs/hone/packed"
	a := emptyCommit(t, s, nil, "a")
	b := emptyCommit(t, s, []plumbing.Hash{a}, "b")
	gitOut(t, s, "", "update-ref", ref, a.String())
	if h, ok := readRef(t, s, ref); !ok || h != a {
		t.Fatalf("Read of a ref git wrote = %s, %v", h, ok)
	}
	gitOut(t, s, "", "pack-refs", "--all")
	if h, ok := readRef(t, s, ref); !ok || h != a {
		t.Fatalf("Read of a packed ref = %s, %v", h, ok)
	}
	if err := s.CompareAndSwap(ctx, ref, b, a); err != nil {
		t.Fatalf("CompareAndSwap of a packed ref: %v", err)
	}
	if got := gitOut(t, s, "", "rev-parse", ref); got != b.String() {
		t.Fatalf("git reads the moved packed ref as %s", got)
	}
	gitOut(t, s, "", "pack-refs", "--all")
	if err := s.Delete(ctx, ref, b); err != nil {
		t.Fatalf("Delete of a packed ref: %v", err)
	}
	if _, ok := readRef(t, s, ref); ok {
		t.Fatalf("a deleted packed ref came back")
	}
}

// concurrentWriters: writers through the Store and git's own update-ref
// append to one branch at once; every append lands exactly once.
func concurrentWriters(t *testing.T, s repo.Store) {
	const ref, storeWriters, gitWriters, each = "refs/heads/busy", 4, 2, 6
	var wg sync.WaitGroup
	errc := make(chan error, storeWriters+gitWriters)
	for w := range storeWriters {
		wg.Go(func() {
			for i := range each {
				_, err := repo.UpdateRef(ctx, s, ref, func(tip plumbing.Hash, ok bool) (plumbing.Hash, error) {
					var parents []plumbing.Hash
					if ok {
						parents = []plumbing.Hash{tip}
					}
					tree, err := s.WriteObject(plumbing.TreeObject, nil)
					if err != nil {
						return tip, err
					}
					return s.WriteObject(plumbing.CommitObject, commitBytes(tree, parents, fmt.Sprintf("store %d.%d", w, i)))
				})
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	for w := range gitWriters {
		wg.Go(func() {
			for i := 0; i < each; {
				tip, _, err := s.Read(ref)
				if err != nil {
					errc <- err
					return
				}
				args := []string{"commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", fmt.Sprintf("git %d.%d", w, i)}
				old := strings.Repeat("0", 40)
				if !tip.IsZero() {
					args = append(args, "-p", tip.String())
					old = tip.String()
				}
				out, err := s.Git(ctx, git.Cmd{Args: args})
				if err != nil {
					errc <- err
					return
				}
				if _, err := s.Git(ctx, git.Cmd{Args: []string{"update-ref", ref, strings.TrimSpace(string(out)), old}}); err == nil {
					i++
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	msgs := strings.Split(gitOut(t, s, "", "log", "--format=%s", ref), "\n")
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m] {
			t.Fatalf("%q landed twice", m)
		}
		seen[m] = true
	}
	if want := (storeWriters + gitWriters) * each; len(msgs) != want {
		t.Fatalf("%d commits on %s, want %d: appends were lost", len(msgs), ref, want)
	}
}

// runsGit: git runs in the repository whatever Dir the caller set, and
// reports its failures with git's own words.
func runsGit(t *testing.T, s repo.Store) {
	if got := gitOut(t, s, "", "rev-parse", "--is-inside-work-tree"); got != "true" {
		t.Fatalf("git rev-parse --is-inside-work-tree = %q", got)
	}
	out, err := s.Git(ctx, git.Cmd{Dir: "/", Args: []string{"rev-parse", "--git-dir"}})
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("git with Dir set elsewhere = %q, %v; want it to run in the repository", out, err)
	}
	_, err = s.Git(ctx, git.Cmd{Args: []string{"cat-file", "-t", strings.Repeat("ab", 20)}})
	var ge *git.Error
	if !errors.As(err, &ge) || ge.ExitCode == 0 || ge.Stderr == "" {
		t.Fatalf("a failing git = %v; want a *git.Error with git's stderr", err)
	}
}
