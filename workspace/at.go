package workspace

import (
	"context"
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// Committed is hone.toml as one commit holds it. A working tree is the
// optimizer's to edit, so what judges its work (the pin's gates and bench,
// the protected base's allowlist) is read from a commit.
type Committed struct {
	Commit string  // the 40-hex commit it was read from
	Blob   string  // the id of its hone.toml blob, which records can name
	Config *Config // parsed and validated as Parse does
}

// LoadAt reads hone.toml from the objects of commit rev, never from a working
// tree. rev may be any revision git resolves to a commit. Errors name the
// file as <short commit>:hone.toml, with the line: rev naming no commit and a
// commit without hone.toml are NotFound, a bad file Invalid.
func LoadAt(ctx context.Context, r *repo.Repo, rev string) (*Committed, error) {
	commit, err := r.ResolveCommit(ctx, rev)
	if errors.Is(err, repo.ErrNoCommit) {
		return nil, errs.NotFoundf("%q names no commit; cannot read %s there", rev, FileName)
	}
	if err != nil {
		return nil, err
	}
	name := git.Short(commit) + ":" + FileName
	co, err := r.Git.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read commit %s", git.Short(commit))
	}
	f, err := co.File(FileName)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, errs.NotFoundf("commit %s (%s) has no %s; commit one there", git.Short(commit), rev, FileName)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s", name)
	}
	if m := f.Mode; m != filemode.Regular && m != filemode.Executable && m != filemode.Deprecated {
		return nil, errs.Invalidf("%s is not a regular file (mode %s)", name, f.Mode)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s", name)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s", name)
	}
	cfg, err := Parse(name, b)
	if err != nil {
		return nil, err
	}
	return &Committed{Commit: commit, Blob: f.Hash.String(), Config: cfg}, nil
}

// Target returns the named target as the commit defines it, or a NotFound
// error listing the targets it does define.
func (c *Committed) Target(name string) (*Target, error) { return c.Config.Target(name) }
