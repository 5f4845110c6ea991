package workspace

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// ReasonStalePin is the stable code of a pin the protected tip does not
// accept, in refusals and in the verdicts recorded for such proposals.
const ReasonStalePin = "stale-pin"

// StalePinError refuses a pin the protected tip does not accept. It is an
// errs.Policy error (exit 3); Differs says what changed since Pin was the
// current pin, and is empty when Pin never was one.
type StalePinError struct {
	Target  string
	Pin     string // the refused commit
	Current string // the current pin, and the ref that names it
	PinRef  string
	Differs []string
	// CodeMoved: the target's own files changed since Pin. A patch is
	// judged against the code it would land on, so a baseline built at an
	// older pin would credit the patch with whatever main did since, or
	// judge it against code main has since fixed.
	CodeMoved bool
}

func (e *StalePinError) Error() string {
	why := fmt.Sprintf("%s was never the current pin (it is not on the first-parent history of %s)", git.Short(e.Pin), e.PinRef)
	switch {
	case len(e.Differs) > 0:
		why = fmt.Sprintf("the goalposts changed since %s: %s differ", git.Short(e.Pin), listed(e.Differs, 5))
	case e.CodeMoved:
		why = fmt.Sprintf("the target's own code changed since %s, and a patch is judged against the code it would land on", git.Short(e.Pin))
	}
	return fmt.Sprintf("refused (%s): target %q is judged at its current pin %s (%s), and %s; re-propose the patch at the current pin %s",
		ReasonStalePin, e.Target, git.Short(e.Current), e.PinRef, why, git.Short(e.Current))
}

// Unwrap makes the refusal a Policy error for errs.CodeOf.
func (e *StalePinError) Unwrap() error { return &errs.Error{Code: errs.Policy, Msg: e.Error()} }

// listed joins at most n names, saying how many more there were.
func listed(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// ConfigBlob is the id of hone.toml's blob at commit, or "" without one.
func ConfigBlob(r *repo.Repo, commit string) (string, error) {
	st := r.Store("")
	root, err := treeOf(st, commit)
	if err != nil {
		return "", err
	}
	e, err := repo.EntryAt(st, root, FileName)
	if errors.Is(err, repo.ErrNoEntry) {
		return "", nil
	}
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot read %s at %s", FileName, git.Short(commit))
	}
	return e.Hash.String(), nil
}

// treeOf is the root tree of commit.
func treeOf(st repo.Store, commit string) (repo.Hash, error) {
	co, err := st.ReadCommit(repo.NewHash(commit))
	if err != nil {
		return repo.ZeroHash, errs.Wrap(errs.Failure, err, "cannot read commit %s", git.Short(commit))
	}
	return co.Tree, nil
}

// codeMoved reports whether t's folder differs between commits a and b:
// the code a patch of t changes and a baseline of t is built from.
func codeMoved(r *repo.Repo, t *Target, a, b string) (bool, error) {
	st := r.Store("")
	ha, err := subtree(st, a, t.Rules().Root)
	if err != nil {
		return false, err
	}
	hb, err := subtree(st, b, t.Rules().Root)
	if err != nil {
		return false, err
	}
	return ha != hb, nil
}

// subtree is the hash of the tree at dir ("." the whole tree) in commit,
// the zero hash when there is none.
func subtree(st repo.Store, commit, dir string) (repo.Hash, error) {
	root, err := treeOf(st, commit)
	if err != nil || dir == "." {
		return root, err
	}
	e, err := repo.EntryAt(st, root, dir)
	if errors.Is(err, repo.ErrNoEntry) {
		return repo.ZeroHash, nil
	}
	if err != nil {
		return repo.ZeroHash, errs.Wrap(errs.Failure, err, "cannot read %s at %s", dir, git.Short(commit))
	}
	return e.Hash, nil
}

// protectedDiff lists the paths under t's protect patterns (gate scripts,
// test data, harnesses) that differ between commits a and b, sorted.
func protectedDiff(r *repo.Repo, t *Target, a, b string) ([]string, error) {
	if len(t.Protect) == 0 {
		return nil, nil
	}
	pa, err := protectedFiles(r, t.Rules(), a)
	if err != nil {
		return nil, err
	}
	pb, err := protectedFiles(r, t.Rules(), b)
	if err != nil {
		return nil, err
	}
	var out []string
	for p, h := range pa {
		if pb[p] != h {
			out = append(out, p)
		}
	}
	for p := range pb {
		if _, ok := pa[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// protectedFiles maps every file under rules' protect patterns at commit
// to its mode and blob.
func protectedFiles(r *repo.Repo, rules allowlist.Rules, commit string) (map[string]string, error) {
	st := r.Store("")
	sub, err := treeOf(st, commit)
	if err != nil {
		return nil, err
	}
	if rules.Root != "." {
		e, err := repo.EntryAt(st, sub, rules.Root)
		if errors.Is(err, repo.ErrNoEntry) {
			return map[string]string{}, nil
		}
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot read %s at %s", rules.Root, git.Short(commit))
		}
		if e.Mode != repo.ModeDir {
			return map[string]string{}, nil
		}
		sub = e.Hash
	}
	out := map[string]string{}
	err = repo.WalkTree(st, sub, func(name string, e repo.TreeEntry) error {
		if !e.Mode.IsFile() {
			return nil
		}
		for _, pat := range rules.Protect {
			if allowlist.Protected(pat, name) {
				out[path.Join(rules.Root, name)] = e.Mode.String() + " " + e.Hash.String()
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s at %s", rules.Root, git.Short(commit))
	}
	return out, nil
}
