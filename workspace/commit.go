package workspace

import (
	"context"
	"errors"
	"path"
	"strings"

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
	f, b, err := repo.FileAt(r.Store(""), repo.NewHash(commit), FileName)
	if errors.Is(err, repo.ErrNoEntry) {
		return nil, errs.NotFoundf("commit %s (%s) has no %s; commit one there", git.Short(commit), rev, FileName)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s", name)
	}
	if m := f.Mode; m != repo.ModeRegular && m != repo.ModeExecutable && m != repo.ModeDeprecated {
		return nil, errs.Invalidf("%s is not a regular file (mode %s)", name, f.Mode)
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
	st := r.Store("")
	co, err := st.ReadCommit(repo.NewHash(commit))
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot read commit %s", git.Short(commit))
	}
	at := "commit " + git.Short(commit)
	var segs []string
	if t.Path != "." {
		segs = strings.Split(t.Path, "/")
	}
	for n := 1; n <= len(segs); n++ {
		dir := strings.Join(segs[:n], "/")
		entry, err := repo.EntryAt(st, co.Tree, dir)
		switch {
		case errors.Is(err, repo.ErrNoEntry):
			if len(t.Files) > 0 {
				return c.Errorf([]string{"targets", t.Name, "files"}, "pattern %q matches no file at %s: the target's path %s does not exist there", t.Files[0], at, t.Path)
			}
			return nil
		case err != nil:
			return errs.Wrap(errs.Failure, err, "cannot read %s at %s", dir, at)
		case entry.Mode != repo.ModeDir:
			// A file or a symlink, on the path or at its end: patches
			// could never land below it.
			return c.Errorf([]string{"targets", t.Name, "path"}, notADirectory, dir, at)
		}
	}
	if len(t.Files) == 0 {
		return nil
	}
	sub := co.Tree
	if t.Path != "." {
		e, err := repo.EntryAt(st, co.Tree, t.Path)
		if err != nil {
			return errs.Wrap(errs.Failure, err, "cannot read %s at %s", t.Path, at)
		}
		sub = e.Hash
	}
	var paths []string
	err = repo.WalkTree(st, sub, func(name string, e repo.TreeEntry) error {
		if e.Mode != repo.ModeDir {
			paths = append(paths, path.Join(t.Path, name))
		}
		return nil
	})
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot read %s at %s", t.Path, at)
	}
	if missing := t.Rules().Unlisted(paths); len(missing) > 0 {
		return c.Errorf([]string{"targets", t.Name, "files"}, "pattern %q matches no file under %s at %s; name existing files, or a directory's files as \"dir/**\"", missing[0], t.Path, at)
	}
	return nil
}
