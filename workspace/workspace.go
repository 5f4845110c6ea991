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

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
)

// Workspace is a repository with a parsed hone.toml.
type Workspace struct {
	*repo.Repo
	ConfigPath string
	Config     *Config
}

// Open finds the workspace containing dir and loads its hone.toml. The file is
// read from the current worktree's top level, falling back to the main
// worktree's, so a linked worktree made before hone.toml was committed still works.
func Open(dir string) (*Workspace, error) {
	r, err := repo.Open(dir)
	if err != nil {
		return nil, err
	}
	return Load(r)
}

// Load reads the hone.toml of an open repository, with the same lookup as
// Open. Without one it returns a NotFound error, so callers for whom the file
// is optional can go on with the Repo alone.
func Load(r *repo.Repo) (*Workspace, error) {
	candidates := []string{filepath.Join(r.Root, FileName)}
	if main := filepath.Dir(r.CommonDir); main != r.Root {
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
		ws := &Workspace{Repo: r, ConfigPath: p, Config: cfg}
		if err := ws.checkPaths(); err != nil {
			return nil, err
		}
		if err := ws.checkReadOnly(); err != nil {
			return nil, err
		}
		return ws, nil
	}
	return nil, errs.NotFoundf("no %s at %s; run `hone init` to create one", FileName, r.Root)
}

// Target returns the named target or a NotFound error listing the known ones.
func (w *Workspace) Target(name string) (*Target, error) { return w.Config.Target(name) }

// TargetNames lists the targets in name order.
func (w *Workspace) TargetNames() []string { return w.Config.TargetNames() }

// ResolvePin returns the 40-hex commit the target's pin names (see
// ResolvePinRef), after checking the target against the pin's tree (see
// CheckTree). A pin that does not resolve, or a tree the target does not
// fit, is a hone.toml error (exit 5) naming the key and its line.
func (w *Workspace) ResolvePin(ctx context.Context, t *Target) (string, error) {
	_, pin, err := ResolvePinRef(ctx, w.Repo, t.Pin)
	if errors.Is(err, repo.ErrNoCommit) {
		hint := "set it to a branch, tag or commit that exists"
		if !w.HasCommits() {
			hint = "the repository has no commit yet: commit the target first"
		}
		return "", w.Config.Errorf([]string{"targets", t.Name, "pin"}, "%q does not name a commit; %s", t.Pin, hint)
	}
	if err != nil {
		return "", err
	}
	if err := w.Config.CheckTree(w.Repo, t, pin); err != nil {
		return "", err
	}
	return pin, nil
}

// checkPaths refuses a target path that leaves the repository through a
// symlinked directory in the working tree (targets -> /elsewhere): commands
// run in <checkout>/<path>, so such a target would run outside the checkout.
// A path that names a file is refused too: every patch would be.
func (w *Workspace) checkPaths() error {
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
		if fi, err := os.Stat(filepath.Join(w.Root, filepath.FromSlash(t.Path))); err == nil && !fi.IsDir() {
			return w.Config.Errorf([]string{"targets", name, "path"}, notADirectory, t.Path, "the working tree")
		}
	}
	return nil
}

// notADirectory is the message for a path that names a file (or, at a
// commit, a symlink).
const notADirectory = "%q is not a directory in %s; set path to the directory holding the target and name the files patches may change in files = [...]"

func (w *Workspace) String() string { return fmt.Sprintf("workspace %s", w.Root) }
