// Package workspace finds the hone workspace around a directory and reads its
// hone.toml. A workspace is a non-bare git repository with hone.toml at its top
// level; it is found from any subfolder and from any linked worktree.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
)

// Repo is a git repository located from some directory inside it.
type Repo struct {
	Root      string // top level of the worktree the directory is in
	GitDir    string // that worktree's git directory
	CommonDir string // the git directory shared by all worktrees (holds refs, objects, hone state)
	Git       *gogit.Repository
}

// Workspace is a Repo with a parsed hone.toml.
type Workspace struct {
	*Repo
	ConfigPath string
	Config     *Config
}

// OpenRepo finds the git repository containing dir (or the current directory
// when dir is empty). Outside any repository it returns a NotFound error.
func OpenRepo(dir string) (*Repo, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot read the current directory")
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot resolve %s", dir)
	}
	top, gitDir, err := findDotGit(abs)
	if err != nil {
		return nil, err
	}
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	r, err := gogit.PlainOpenWithOptions(top, &gogit.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open the git repository at %s", top)
	}
	return &Repo{Root: top, GitDir: gitDir, CommonDir: common, Git: r}, nil
}

// findDotGit walks up from dir to the first directory holding a .git entry,
// following a linked worktree's "gitdir:" file to its git directory.
func findDotGit(dir string) (top, gitDir string, err error) {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		fi, statErr := os.Stat(p)
		if statErr == nil {
			if fi.IsDir() {
				return d, p, nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return "", "", errs.Wrap(errs.Failure, err, "cannot read %s", p)
			}
			line := strings.TrimSpace(string(b))
			gd, ok := strings.CutPrefix(line, "gitdir:")
			if !ok {
				return "", "", errs.Invalidf("%s is not a gitdir file; repair the worktree with `git worktree repair`", p)
			}
			gd = strings.TrimSpace(gd)
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(d, gd)
			}
			return d, filepath.Clean(gd), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", errs.NotFoundf("not inside a git repository (searched up from %s); run hone inside a git repository, or `git init` first", dir)
		}
		d = parent
	}
}

// Open finds the workspace containing dir and loads its hone.toml. The file is
// read from the current worktree's top level, falling back to the main
// worktree's, so a linked worktree made before hone.toml was committed still works.
func Open(dir string) (*Workspace, error) {
	repo, err := OpenRepo(dir)
	if err != nil {
		return nil, err
	}
	return repo.Workspace()
}

// Workspace loads the hone.toml of an open repository, with the same lookup
// as Open. Without one it returns a NotFound error, so callers for whom the
// file is optional can go on with the Repo alone.
func (repo *Repo) Workspace() (*Workspace, error) {
	candidates := []string{filepath.Join(repo.Root, FileName)}
	if main := filepath.Dir(repo.CommonDir); main != repo.Root {
		candidates = append(candidates, filepath.Join(main, FileName))
	}
	for _, p := range candidates {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot read %s", p)
		}
		cfg, err := Parse(p, b)
		if err != nil {
			return nil, err
		}
		ws := &Workspace{Repo: repo, ConfigPath: p, Config: cfg}
		if err := ws.checkSymlinks(); err != nil {
			return nil, err
		}
		return ws, nil
	}
	return nil, errs.NotFoundf("no %s at %s; run `hone init` to create one", FileName, repo.Root)
}

// Target returns the named target or a NotFound error listing the known ones.
func (w *Workspace) Target(name string) (*Target, error) {
	if t, ok := w.Config.Targets[name]; ok {
		return t, nil
	}
	names := w.TargetNames()
	if len(names) == 0 {
		return nil, errs.NotFoundf("unknown target %q: %s defines no targets; add a [targets.%s] table", name, FileName, name)
	}
	return nil, errs.NotFoundf("unknown target %q; known targets: %s", name, strings.Join(names, ", "))
}

// ResolvePin returns the 40-hex commit the target's pin names. A pin that does
// not resolve is a hone.toml error (exit 5) naming the key and its line.
func (w *Workspace) ResolvePin(t *Target) (string, error) {
	if h, err := w.Git.ResolveRevision(plumbing.Revision(t.Pin)); err == nil {
		if c, err := w.Git.CommitObject(*h); err == nil {
			return c.Hash.String(), nil
		}
	}
	// go-git does not know every revision syntax git does (and does not peel
	// annotated tags here); ask git before failing.
	out, err := git.Output(context.Background(), w.Root, "rev-parse", "--verify", "--quiet", "--end-of-options", t.Pin+"^{commit}")
	if err != nil || len(out) != 40 {
		hint := "set it to a branch, tag or commit that exists"
		if _, herr := w.Git.Head(); errors.Is(herr, plumbing.ErrReferenceNotFound) {
			hint = "the repository has no commit yet: commit the target first"
		}
		return "", w.Config.Errorf([]string{"targets", t.Name, "pin"}, "%q does not name a commit; %s", t.Pin, hint)
	}
	return out, nil
}

// checkSymlinks refuses a target path that leaves the repository through a
// symlinked directory in the working tree (targets -> /elsewhere): commands
// run in <checkout>/<path>, so such a target would run outside the checkout.
func (w *Workspace) checkSymlinks() error {
	root, err := filepath.EvalSymlinks(w.Root)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot resolve %s", w.Root)
	}
	for _, name := range w.TargetNames() {
		t := w.Config.Targets[name]
		dir := w.Root
		for _, seg := range strings.Split(t.Path, "/") {
			dir = filepath.Join(dir, seg)
			fi, err := os.Lstat(dir)
			if err != nil {
				break
			}
			if fi.Mode()&os.ModeSymlink == 0 {
				continue
			}
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				return w.Config.Errorf([]string{"targets", name, "path"}, "%s is a broken symlink; make it a directory inside the repository", dir)
			}
			if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				return w.Config.Errorf([]string{"targets", name, "path"}, "%q leaves the repository through the symlink %s -> %s; point it at a real directory inside the repository", t.Path, dir, real)
			}
		}
	}
	return nil
}

// HoneDir is hone's private state directory inside the common git directory
// (caches, locks, session files). It is created on demand.
func (r *Repo) HoneDir() (string, error) {
	d := filepath.Join(r.CommonDir, "hone")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot create %s", d)
	}
	return d, nil
}

func (w *Workspace) String() string { return fmt.Sprintf("workspace %s", w.Root) }
