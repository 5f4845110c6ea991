// Package repo is hone's handle on one git repository: where its worktree
// and git directories are, hone's private state directory inside it, and the
// one writer of refs (see refs.go). Every package that needs a path under
// <common git dir>/hone asks Repo for it, so the layout lives here only.
package repo

import (
	"context"
	"errors"
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
	Root      string // top level of the worktree the directory is in; "" in a bare repository
	GitDir    string // that worktree's git directory
	CommonDir string // the git directory shared by all worktrees (holds refs, objects, hone state)
	// gg is go-git's handle, which reads packs and decodes objects for the
	// Store. It stays unexported so that no package reaches git past the
	// seam.
	gg *gogit.Repository
}

// Bare reports whether the repository has no working tree (a server's).
func (r *Repo) Bare() bool { return r.Root == "" }

// OpenBare opens the bare repository whose git directory is dir: where a
// server's hooks run.
func OpenBare(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot resolve %s", dir)
	}
	if _, err := os.Stat(filepath.Join(abs, "HEAD")); err != nil {
		return nil, errs.NotFoundf("%s is not a git directory (no HEAD); run the hook in the server's repository", abs)
	}
	if err := checkFormat(abs); err != nil {
		return nil, err
	}
	r, err := gogit.PlainOpenWithOptions(abs, &gogit.PlainOpenOptions{})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open the git repository at %s", abs)
	}
	return &Repo{GitDir: abs, CommonDir: abs, gg: r}, nil
}

// Dir is where git commands for this repository run: the worktree's top
// level, or the git directory of a bare repository.
func (r *Repo) Dir() string {
	if r.Bare() {
		return r.CommonDir
	}
	return r.Root
}

// DefaultBranch is the branch the main worktree's HEAD names (a bare
// repository's default branch), read from the common git directory, so a
// linked worktree's own HEAD never decides it. ok is false when HEAD is
// detached.
func (r *Repo) DefaultBranch() (ref string, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(r.CommonDir, "HEAD"))
	if err != nil {
		return "", false, errs.Wrap(errs.Failure, err, "cannot read %s", filepath.Join(r.CommonDir, "HEAD"))
	}
	ref, ok = strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	return ref, ok, nil
}

// Open finds the git repository containing dir (or the current directory
// when dir is empty). Outside any repository it returns a NotFound error.
func Open(dir string) (*Repo, error) {
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
	if err := checkFormat(common); err != nil {
		return nil, err
	}
	r, err := gogit.PlainOpenWithOptions(top, &gogit.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open the git repository at %s", top)
	}
	return &Repo{Root: top, GitDir: gitDir, CommonDir: common, gg: r}, nil
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

// stateName is hone's private directory inside the common git directory.
const stateName = "hone"

// StatePath is the path of parts below hone's private state directory
// (<common git dir>/hone: caches, locks, session files, checkouts). Nothing
// is created; use StateDir for a directory that must exist.
func (r *Repo) StatePath(parts ...string) string {
	return filepath.Join(append([]string{r.CommonDir, stateName}, parts...)...)
}

// Scratch areas are the folders of the state directory in which hone
// processes make folders they own for their life (see internal/scratch): a
// verdict's, profile's or calibration's run folder, a proposal's throwaway
// index. Whatever makes a folder in one sweeps those of dead owners there,
// and hone gc sweeps them all.
const (
	RunsArea  = "runs"
	ApplyArea = "apply"
)

// ScratchAreas lists every scratch area, for sweeping.
var ScratchAreas = []string{RunsArea, ApplyArea}

// StateDir is StatePath for a directory, created on demand.
func (r *Repo) StateDir(parts ...string) (string, error) {
	d := r.StatePath(parts...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot create %s", d)
	}
	return d, nil
}

// ErrNoCommit means a revision names no commit of the repository.
var ErrNoCommit = errors.New("no such commit")

// ResolveCommit returns the 40-hex commit rev names, peeling annotated tags.
// A revision that names no commit is ErrNoCommit (wrapped); callers say which
// setting named it.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (string, error) {
	if h, err := r.gg.ResolveRevision(plumbing.Revision(rev)); err == nil {
		if c, err := r.gg.CommitObject(*h); err == nil {
			return c.Hash.String(), nil
		}
	}
	// go-git does not know every revision syntax git does (and does not peel
	// annotated tags here); ask git before failing.
	raw, err := git.Run(ctx, git.Cmd{Dir: r.Dir(), Isolated: true, Args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"}})
	if err := ctx.Err(); err != nil {
		return "", errs.Wrap(errs.Failure, err, "resolving %q interrupted", rev)
	}
	out := strings.TrimSpace(string(raw))
	if err != nil || len(out) != 40 {
		return "", ErrNoCommit
	}
	return out, nil
}

// HasCommits reports whether HEAD names a commit (false in a repository
// without one yet).
func (r *Repo) HasCommits() bool {
	_, err := r.gg.Head()
	return !errors.Is(err, plumbing.ErrReferenceNotFound)
}

// WorktreesDir is the folder, at a main worktree's top level, where
// `hone worktree enter` makes managed worktrees. It must never be committed.
const WorktreesDir = ".sema-worktrees"

// IgnoreLine is the one line hone adds to .gitignore for WorktreesDir.
const IgnoreLine = "/" + WorktreesDir + "/"

// IgnoreWorktrees makes <root>/.gitignore ignore WorktreesDir: it appends
// IgnoreLine unless a line already names the folder (with or without its
// slashes), and reports whether it wrote.
func IgnoreWorktrees(root string) (bool, error) {
	p := filepath.Join(root, ".gitignore")
	b, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, errs.Wrap(errs.Failure, err, "cannot read %s", p)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Trim(strings.TrimSpace(line), "/") == WorktreesDir {
			return false, nil
		}
	}
	add := IgnoreLine + "\n"
	if len(b) > 0 && b[len(b)-1] != '\n' {
		add = "\n" + add
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return false, errs.Wrap(errs.Failure, err, "cannot update %s", p)
	}
	_, err = f.WriteString(add)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, errs.Wrap(errs.Failure, err, "cannot update %s", p)
	}
	return true, nil
}
