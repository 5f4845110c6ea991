// Package worktree runs worktree sessions: a separate checkout under
// <repo>/.sema-worktrees/<name> on branch worktree-<name> that an agent or a
// person enters, works in and exits, with the semantics of Claude Code's
// EnterWorktree/ExitWorktree. Entering is a directory switch, not isolation:
// nothing outside the worktree becomes harder to reach, which is why every
// Enter message says so. A CLI cannot move its parent shell, so the
// session lives in a state file in the common git directory (every worktree
// sees it, and a later process can exit what an earlier one entered) and
// callers are told which directory to go to.
package worktree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hone-perf/hone/internal/atomicfile"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
)

// Kind says how a session got its worktree, which decides whether Exit may
// remove it.
type Kind string

const (
	Created Kind = "created" // hone made the worktree when the session began
	Resumed Kind = "resumed" // a managed worktree made earlier, entered again by name
	ByPath  Kind = "path"    // an existing worktree entered with --path; never removed
)

// Session is the state of one active session, as stored in
// <common git dir>/hone/worktree-sessions/<session>.toml. Fields are only
// ever added.
type Session struct {
	Session        string    `toml:"session" json:"session"`
	Kind           Kind      `toml:"kind" json:"kind"`
	WorktreeName   string    `toml:"worktree_name,omitempty" json:"worktree_name,omitempty"` // managed worktrees only
	WorktreePath   string    `toml:"worktree_path" json:"worktree_path"`
	WorktreeBranch string    `toml:"worktree_branch" json:"worktree_branch"` // "" when the worktree's HEAD is detached
	RepoRoot       string    `toml:"repo_root" json:"repo_root"`             // the main worktree, parent of .sema-worktrees
	OriginalCwd    string    `toml:"original_cwd" json:"original_cwd"`
	Base           string    `toml:"base" json:"base"`               // "head" or "fresh"; "" for a path-entered worktree
	BaseRef        string    `toml:"base_ref" json:"base_ref"`       // what the base was resolved from, e.g. "origin/HEAD"
	BaseCommit     string    `toml:"base_commit" json:"base_commit"` // the commit the worktree branched from; for a path-entered one, its HEAD when entered
	Target         string    `toml:"target" json:"target"`
	EnteredAt      time.Time `toml:"entered_at" json:"entered_at"`
}

// record is what hone remembers about a managed worktree beyond the session
// that made it, so a resumed session still knows its base.
type record struct {
	Name       string    `toml:"name"`
	Branch     string    `toml:"branch"`
	Base       string    `toml:"base"`
	BaseRef    string    `toml:"base_ref"`
	BaseCommit string    `toml:"base_commit"`
	CreatedAt  time.Time `toml:"created_at"`
}

func sessionsDir(repo *repo.Repo) string {
	return repo.StatePath("worktree-sessions")
}

func sessionFile(repo *repo.Repo, session string) string {
	return filepath.Join(sessionsDir(repo), session+".toml")
}

func recordFile(repo *repo.Repo, name string) string {
	return repo.StatePath("worktrees", filepath.FromSlash(name)+".toml")
}

// loadSession returns the active session, or nil when there is none.
func loadSession(repo *repo.Repo, session string) (*Session, error) {
	var s Session
	ok, err := readTOML(sessionFile(repo, session), &s)
	if !ok || err != nil {
		return nil, err
	}
	return &s, nil
}

func saveSession(repo *repo.Repo, s *Session) error {
	return writeTOML(sessionFile(repo, s.Session), s)
}

func endSession(repo *repo.Repo, session string) error {
	p := sessionFile(repo, session)
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return errs.Wrap(errs.Failure, err, "cannot end the worktree session (remove %s)", p)
	}
	return nil
}

// loadRecord returns the record of a managed worktree, or nil when hone has
// none (the worktree was made by hand).
func loadRecord(repo *repo.Repo, name string) (*record, error) {
	var r record
	ok, err := readTOML(recordFile(repo, name), &r)
	if !ok || err != nil {
		return nil, err
	}
	return &r, nil
}

func readTOML(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, errs.Wrap(errs.Failure, err, "cannot read %s", path)
	}
	if _, err := toml.Decode(string(b), v); err != nil {
		return false, errs.Wrap(errs.Invalid, err, "corrupt worktree state %s; delete it to start over", path)
	}
	return true, nil
}

// writeTOML replaces path atomically: readers in other processes see the old
// file or the new one, never a partial write. It does not fsync, as git does
// not for refs by default: a crash can at worst leave an empty file, which
// readTOML reports as corrupt with the fix, and fsync would double the cost of
// a small enter on a slow disk.
func writeTOML(path string, v any) error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot encode %s", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", filepath.Dir(path))
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o600); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", path)
	}
	return nil
}

// SessionTarget returns the target the worktree at repo.Root is held to. A
// managed worktree's comes from its binding (see Bound), which survives the
// loss of every session file; one without a readable binding is a Policy
// error. Any other worktree's comes from an active session that entered it
// by path: the session named by HONE_SESSION wins, and when other sessions
// hold the worktree with different targets the binding is ambiguous and an
// error says so. ok is false when nothing binds the worktree to a target.
// Used by `hone guard pre-commit` to enforce the target's allowlist on
// commits in the worktree.
func SessionTarget(repo *repo.Repo) (target string, ok bool, err error) {
	if name, managed := ManagedName(repo); managed {
		b, err := Bound(repo, name)
		if err != nil {
			return "", false, err
		}
		return b.Target, b.Target != "", nil
	}
	root := canonical(repo.Root)
	if name, err := SessionName(); err == nil {
		s, err := loadSession(repo, name)
		if err != nil {
			return "", false, err
		}
		if s != nil && canonical(s.WorktreePath) == root {
			return s.Target, s.Target != "", nil
		}
	}
	files, _ := filepath.Glob(filepath.Join(sessionsDir(repo), "*.toml"))
	var found *Session
	for _, f := range files {
		var s Session
		if ok, err := readTOML(f, &s); !ok || err != nil || canonical(s.WorktreePath) != root || s.Target == "" {
			continue
		}
		if found != nil && found.Target != s.Target {
			return "", false, errs.Policyf("worktree %s is bound to target %q by session %q and to %q by session %q; set HONE_SESSION to choose", repo.Root, found.Target, found.Session, s.Target, s.Session)
		}
		found = &s
	}
	if found == nil {
		return "", false, nil
	}
	return found.Target, true, nil
}

// canonical resolves symlinks so paths compare equal however they were
// spelled; a path that cannot be resolved is compared as written.
func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
