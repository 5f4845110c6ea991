package repo

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/git"
)

// Store is hone's one seam to a repository's git data: refs moved by
// compare-and-swap, objects read and written by id, and the git binary for
// what only git does (apply, diff, fetch, push, fsck). Packages that keep
// state in git (the ledger first) reach it through a Store, so one
// conformance suite (package repotest) says what every implementation
// must do, and a test may hand a package another implementation.
//
// Ref methods take fully qualified names ("refs/heads/main"). An all-zero
// old value to CompareAndSwap means "the ref must not exist yet"; a lost
// race is ErrRaceLost.
type Store interface {
	CASRefs
	// Delete removes ref if it holds old.
	Delete(ctx context.Context, ref string, old plumbing.Hash) error
	// Reflog returns the recorded moves of ref, oldest first.
	Reflog(ref string) ([]ReflogEntry, error)

	// ReadObject returns the content of object h of type t (ErrNoObject,
	// wrapped, when there is none).
	ReadObject(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error)
	// WriteObject stores an object and returns its id.
	WriteObject(t plumbing.ObjectType, data []byte) (plumbing.Hash, error)
	// ObjectSize is the size of object h's content, without reading it.
	ObjectSize(t plumbing.ObjectType, h plumbing.Hash) (int64, error)
	// ReadCommit and ReadTree read and decode one object (see EntryAt,
	// WalkTree and FileAt for paths in a tree).
	ReadCommit(h plumbing.Hash) (*Commit, error)
	ReadTree(h plumbing.Hash) ([]TreeEntry, error)

	// ResolveCommit returns the commit rev names (any revision git
	// resolves, annotated tags peeled); ErrNoCommit, wrapped, when none.
	ResolveCommit(ctx context.Context, rev string) (plumbing.Hash, error)
	// Symref returns the ref a symbolic ref names ("HEAD", this
	// worktree's, or refs/remotes/origin/HEAD); ok is false when ref does
	// not exist or holds a commit id.
	Symref(ref string) (target string, ok bool, err error)

	// Config is the value of a "section.option" setting, as `git config`
	// reads it without running git: the repository's, else the user's;
	// "" when unset.
	Config(key string) string

	// Git runs the git binary in the repository (c.Dir is ignored).
	Git(ctx context.Context, c git.Cmd) ([]byte, error)
}

// CASRefs are the two ref operations every other is built on (UpdateRef).
type CASRefs interface {
	// Read returns the value of ref; ok is false when it does not exist.
	Read(ref string) (h plumbing.Hash, ok bool, err error)
	// CompareAndSwap moves ref from old to newH, atomically for every
	// writer, git's own included.
	CompareAndSwap(ctx context.Context, ref string, newH, old plumbing.Hash) error
}

// Store returns the repository's Store, whose ref moves the reflog
// records with reason (git's default message when "").
func (r *Repo) Store(reason string) Store {
	refs := r.Refs()
	if reason != "" {
		refs = refs.WithReason(reason)
	}
	return &fileStore{Refs: refs, repo: r}
}

// fileStore is the Store over a repository on disk: refs in git's "files"
// format through Refs (hone's own lock-file writer, since go-git's
// CheckAndSetReference is invisible to git's locks), objects through
// Repo.ReadObject and Repo.WriteObject, and git run in Repo.Dir.
type fileStore struct {
	*Refs
	repo *Repo
}

func (s *fileStore) ReadObject(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	return s.repo.ReadObject(t, h)
}

func (s *fileStore) WriteObject(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	return s.repo.WriteObject(t, data)
}

func (s *fileStore) Git(ctx context.Context, c git.Cmd) ([]byte, error) {
	c.Dir = s.repo.Dir()
	return git.Run(ctx, c)
}
