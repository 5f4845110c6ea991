package worktree

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
)

// A managed worktree's binding to its target is a blob at
// refs/hone/worktrees/<name>, not a file of hone's state directory: the
// guards read it for every commit on worktree-<name> and in that worktree,
// and deleting hone's session files (or all of .git/hone) leaves it in
// place. A managed worktree without a readable binding is refused by the
// guards, never waved through. No git command moves the ref: the
// reference-transaction hook refuses any update of refs/hone/worktrees/*
// made through git, and hone writes it itself.

// BindingPrefix is where the bindings of managed worktrees live.
const BindingPrefix = "refs/hone/worktrees/"

// Binding ties managed worktree Name (branch worktree-<Name>) to a target.
type Binding struct {
	Name       string `toml:"name"`
	Branch     string `toml:"branch"`
	Target     string `toml:"target"`      // "" when the worktree was entered without --target
	BaseCommit string `toml:"base_commit"` // what the branch started from: commits before it are not the agent's
}

// ReadBinding returns the binding of managed worktree name. found is false
// when there is none; a binding that cannot be read is an error.
func ReadBinding(r *repo.Repo, name string) (*Binding, bool, error) {
	ref := BindingPrefix + name
	st := r.Store("")
	h, ok, err := st.Read(ref)
	if err != nil || !ok {
		return nil, false, err
	}
	b, err := st.ReadObject(repo.BlobObject, h)
	if err != nil {
		return nil, false, errs.Wrap(errs.Invalid, err, "%s does not hold a readable binding", ref)
	}
	var bd Binding
	if _, err := toml.Decode(string(b), &bd); err != nil || bd.Name != name {
		return nil, false, errs.Invalidf("%s does not hold a readable binding for worktree %s", ref, name)
	}
	return &bd, true, nil
}

// writeBinding stores b as the binding of its worktree.
func writeBinding(ctx context.Context, r *repo.Repo, b *Binding) error {
	var buf bytes.Buffer
	buf.WriteString("# hone: commits on " + b.Branch + " and in its worktree must stay inside target below\n")
	if err := toml.NewEncoder(&buf).Encode(b); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot encode the binding of worktree %s", b.Name)
	}
	st := r.Store("hone: bind worktree " + b.Name)
	h, err := st.WriteObject(repo.BlobObject, buf.Bytes())
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write the binding of worktree %s", b.Name)
	}
	_, err = repo.UpdateRef(ctx, st, BindingPrefix+b.Name, func(repo.Hash, bool) (repo.Hash, error) { return h, nil })
	return err
}

// removeBinding drops the binding of a removed worktree.
func removeBinding(ctx context.Context, r *repo.Repo, name string) error {
	refs := r.Store("hone: remove worktree " + name)
	h, ok, err := refs.Read(BindingPrefix + name)
	if err != nil || !ok {
		return err
	}
	if err := refs.Delete(ctx, BindingPrefix+name, h); err != nil && !errors.Is(err, repo.ErrRaceLost) {
		return err
	}
	return nil
}

// ManagedName returns the name of the managed worktree whose top level is
// r.Root (.sema-worktrees/<name> under the main worktree), or false.
func ManagedName(r *repo.Repo) (string, bool) {
	if r.Bare() || filepath.Base(r.CommonDir) != ".git" {
		return "", false
	}
	managed := canonical(filepath.Join(filepath.Dir(r.CommonDir), ManagedDir)) + string(filepath.Separator)
	root := canonical(r.Root)
	name, ok := strings.CutPrefix(root, managed)
	if !ok || name == "" || ValidateName(filepath.ToSlash(name)) != nil {
		return "", false
	}
	return filepath.ToSlash(name), true
}

// BranchWorktree returns the managed worktree name a branch ref belongs to
// (refs/heads/worktree-<name>), or false.
func BranchWorktree(ref string) (string, bool) {
	name, ok := strings.CutPrefix(ref, "refs/heads/"+BranchPrefix)
	return name, ok && ValidateName(name) == nil
}

// Bound returns the binding of managed worktree name, or a Policy error when
// it has none: a managed worktree whose binding is gone is refused, not
// waved through.
func Bound(r *repo.Repo, name string) (*Binding, error) {
	b, ok, err := ReadBinding(r, name)
	if err != nil {
		return nil, errs.Wrap(errs.Policy, err, "refused: managed worktree %s has no readable binding to a target", name)
	}
	if !ok {
		return nil, errs.Policyf("refused: managed worktree %s (branch %s%s) has no binding to a target at %s%s; hone does not guess which rules hold there. Enter it again from the main worktree with `hone worktree enter --name %s --target TARGET`, or work on another branch outside %s/", name, BranchPrefix, name, BindingPrefix, name, name, ManagedDir)
	}
	return b, nil
}
