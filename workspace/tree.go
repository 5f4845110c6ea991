package workspace

import (
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

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
	entry, err := root.FindEntry(t.Path)
	switch {
	case errors.Is(err, object.ErrEntryNotFound), errors.Is(err, object.ErrDirectoryNotFound):
		if len(t.Files) > 0 {
			return c.Errorf([]string{"targets", t.Name, "files"}, "pattern %q matches no file at %s: the target's path %s does not exist there", t.Files[0], at, t.Path)
		}
		return nil
	case err != nil:
		return errs.Wrap(errs.Failure, err, "cannot read %s at %s", t.Path, at)
	case entry.Mode != filemode.Dir:
		return c.Errorf([]string{"targets", t.Name, "path"}, notADirectory, t.Path, at)
	case len(t.Files) == 0:
		return nil
	}
	sub, err := root.Tree(t.Path)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot read %s at %s", t.Path, at)
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
			paths = append(paths, t.Path+"/"+name)
		}
	}
	if missing := t.Rules().Unlisted(paths); len(missing) > 0 {
		return c.Errorf([]string{"targets", t.Name, "files"}, "pattern %q matches no file under %s at %s; name existing files, or a directory's files as \"dir/**\"", missing[0], t.Path, at)
	}
	return nil
}
