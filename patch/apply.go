package patch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/scratch"
)

// scratchIndex is a throwaway index and object directory. Git reads the
// repository's objects through GIT_ALTERNATE_OBJECT_DIRECTORIES and writes
// new ones only here, so a refused patch leaves nothing in the repository;
// accepted objects are moved in by keep (as git's own push quarantine does).
type scratchIndex struct {
	dir     string // repository directory git runs in
	objects string // the repository's object directory
	tmp     string
	owned   *scratch.Dir
}

// newScratchIndex makes the throwaway index in a folder this process owns,
// so that one a killed proposal leaves is swept by the next.
func newScratchIndex(ctx context.Context, r *repo.Repo) (*scratchIndex, error) {
	d, err := scratch.New(ctx, r.StatePath(repo.ApplyArea), "apply-")
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(d.Path, "objects"), 0o755); err != nil {
		d.Remove()
		return nil, errs.Wrap(errs.Failure, err, "cannot create a throwaway object directory")
	}
	return &scratchIndex{dir: r.Root, objects: filepath.Join(r.CommonDir, "objects"), tmp: d.Path, owned: d}, nil
}

func (s *scratchIndex) close() { s.owned.Remove() }

// git runs one isolated git command on the scratch index: no user or system
// configuration, the throwaway index, new objects kept apart.
func (s *scratchIndex) git(ctx context.Context, stdin []byte, env []string, args ...string) ([]byte, error) {
	c := git.Cmd{
		Dir:      s.dir,
		Args:     append([]string{"-c", "core.protectNTFS=true", "-c", "core.protectHFS=true"}, args...),
		Isolated: true,
		Env: append([]string{
			"GIT_INDEX_FILE=" + filepath.Join(s.tmp, "index"),
			"GIT_OBJECT_DIRECTORY=" + filepath.Join(s.tmp, "objects"),
			"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + s.objects,
		}, env...),
	}
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	return git.Run(ctx, c)
}

// applyFull applies diff to the whole tree of pin in the throwaway index and
// returns the resulting tree and what git changed. It is used when the
// target's path is not a tree at the pin (a target still to be created).
func (s *scratchIndex) applyFull(ctx context.Context, pin string, diff []byte) (string, []git.Change, error) {
	if _, err := s.git(ctx, nil, nil, "read-tree", pin); err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "cannot read the pin %s into a throwaway index", pin)
	}
	tree, err := s.applyAndWrite(ctx, pin, diff)
	if err != nil {
		return "", nil, err
	}
	changes, err := diffTrees(ctx, func(ctx context.Context, args ...string) ([]byte, error) {
		return s.git(ctx, nil, nil, args...)
	}, pin, tree)
	return tree, changes, err
}

// applyAndWrite runs git apply on the throwaway index, with git's own path
// checks (NTFS and HFS protections on), and writes the index's tree.
func (s *scratchIndex) applyAndWrite(ctx context.Context, pin string, diff []byte) (string, error) {
	if _, err := s.git(ctx, diff, nil, "apply", "--cached", "--whitespace=nowarn", "-p1", "-"); err != nil {
		msg := gitStderr(err)
		if strings.Contains(msg, "invalid path") || strings.Contains(msg, "beyond a symbolic link") {
			return "", errs.Policyf("refused by git apply: %s", msg)
		}
		return "", errs.Invalidf("the diff does not apply to the pin %s: %s", git.Short(pin), msg)
	}
	out, err := s.git(ctx, nil, nil, "write-tree")
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot write the patched tree")
	}
	return strings.TrimSpace(string(out)), nil
}

// gitStderr is git's message for a failed command, on one line.
func gitStderr(err error) string {
	var ge *git.Error
	if errors.As(err, &ge) {
		if msg := strings.TrimSpace(ge.Stderr); msg != "" {
			return strings.ReplaceAll(msg, "\n", "; ")
		}
	}
	return err.Error()
}

// keep moves the scratch index's new objects into the repository. Objects are
// immutable and named by their hash, so an existing one is simply skipped.
func (s *scratchIndex) keep() error {
	src := filepath.Join(s.tmp, "objects")
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(s.objects, rel)
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot store objects")
		}
		if err := os.Link(p, dst); err == nil || errors.Is(err, fs.ErrExist) {
			return nil
		}
		return copyFile(p, dst)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot store objects")
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".hone-obj-")
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot store objects")
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return errs.Wrap(errs.Failure, err, "cannot store objects")
	}
	return nil
}

// diffTrees lists what git reports as changed between two tree-ish, without
// rename detection so both sides of a move are seen.
func diffTrees(ctx context.Context, run func(ctx context.Context, args ...string) ([]byte, error), from, to string) ([]git.Change, error) {
	out, err := run(ctx, append(append([]string{"diff-tree"}, git.RawDiffArgs...), "--no-commit-id", from, to)...)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the changes %s..%s", from, to)
	}
	return parseRaw(out)
}

// parseRaw is git.ParseRaw with its error as a Failure: git's output not
// being what git writes is hone's or git's fault, not the diff's.
func parseRaw(out []byte) ([]git.Change, error) {
	changes, err := git.ParseRaw(out)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read git's list of changes")
	}
	return changes, nil
}

// authority checks what git itself reports as changed. It is the check that
// counts: whatever the diff text claimed, only these paths and modes change.
func authority(changes []git.Change, a allowlist.Rules) error {
	if len(changes) == 0 {
		return errs.Invalidf("the diff changes nothing at the pin")
	}
	for _, c := range changes {
		if rule := a.ChangeRule(c); rule != "" {
			return refusal(c.Path, rule)
		}
	}
	return nil
}
