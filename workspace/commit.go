package workspace

import (
	"context"
	"errors"
	"io"
	"path"
	"strings"

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

// CheckTree checks target t against the tree of commit (40-hex): its path
// must be a directory there, or absent (a target still to be created), and
// each of its files globs must match at least one file there. A glob that
// names nothing is a mistake in hone.toml, and a path naming a file would
// make every patch a refusal; both are Invalid errors with the key's line.
func (c *Config) CheckTree(r *repo.Repo, t *Target, commit string) error {
	co, err := r.Git.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot read commit %s", git.Short(commit))
	}
	root, err := co.Tree()
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot read the tree of %s", git.Short(commit))
	}
	at := "commit " + git.Short(commit)
	var segs []string
	if t.Path != "." {
		segs = strings.Split(t.Path, "/")
	}
	for n := 1; n <= len(segs); n++ {
		dir := strings.Join(segs[:n], "/")
		entry, err := root.FindEntry(dir)
		switch {
		case errors.Is(err, object.ErrEntryNotFound), errors.Is(err, object.ErrDirectoryNotFound):
			if len(t.Files) > 0 {
				return c.Errorf([]string{"targets", t.Name, "files"}, "pattern %q matches no file at %s: the target's path %s does not exist there", t.Files[0], at, t.Path)
			}
			return nil
		case err != nil:
			return errs.Wrap(errs.Failure, err, "cannot read %s at %s", dir, at)
		case entry.Mode != filemode.Dir:
			// A file or a symlink, on the path or at its end: patches
			// could never land below it.
			return c.Errorf([]string{"targets", t.Name, "path"}, notADirectory, dir, at)
		}
	}
	if len(t.Files) == 0 {
		return nil
	}
	sub := root
	if t.Path != "." {
		if sub, err = root.Tree(t.Path); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot read %s at %s", t.Path, at)
		}
	}
	var paths []string
	walker := object.NewTreeWalker(sub, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return errs.Wrap(errs.Failure, err, "cannot read %s at %s", t.Path, at)
		}
		if e.Mode != filemode.Dir {
			paths = append(paths, path.Join(t.Path, name))
		}
	}
	if missing := t.Rules().Unlisted(paths); len(missing) > 0 {
		return c.Errorf([]string{"targets", t.Name, "files"}, "pattern %q matches no file under %s at %s; name existing files, or a directory's files as \"dir/**\"", missing[0], t.Path, at)
	}
	return nil
}
