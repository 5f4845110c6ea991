package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/workspace"
)

// EnterOptions says which worktree to enter. Name and Path exclude each other;
// with neither, a managed worktree with a random readable name is created.
type EnterOptions struct {
	Name    string            // managed worktree .sema-worktrees/<Name>; created, or resumed when it exists
	Path    string            // an existing worktree of the repository (relative to Cwd); never removed by Exit
	Base    string            // "head" or "fresh"; "" takes [worktree] base from Config, else "fresh"
	Target  string            // bind the session to this hone.toml target
	Config  *workspace.Config // the repository's hone.toml, or nil when it has none
	Cwd     string            // the caller's directory, where Exit sends it back; "" means the current one
	Session string            // "" means SessionName()
}

// EnterResult is the session now active, and what happened.
type EnterResult struct {
	Session
	GitignoreUpdated bool   `json:"gitignore_updated"` // .sema-worktrees/ was added to .gitignore
	Message          string `json:"message"`
}

// Enter starts a session (or, with Path, moves the active one to another
// worktree). Only one created session may be active per session name: a
// creating or resuming Enter while one is active is refused, so no worktree
// is left untracked. The whole call holds the session lock, so a concurrent
// Enter or Exit fails fast with a Busy error.
func Enter(ctx context.Context, repo *repo.Repo, opts EnterOptions) (*EnterResult, error) {
	if err := checkEnterOptions(&opts); err != nil {
		return nil, err
	}
	root, err := mainRoot(ctx, repo)
	if err != nil {
		return nil, err
	}
	held, err := lockSession(repo, opts.Session)
	if err != nil {
		return nil, err
	}
	defer held.Release()
	active, err := loadSession(repo, opts.Session)
	if err != nil {
		return nil, err
	}
	res, err := enter(ctx, repo, root, active, opts)
	if err != nil {
		return nil, err
	}
	res.Message += "; " + NotIsolation
	return res, nil
}

// NotIsolation ends every Enter message, so that neither a person nor an
// agent reads "worktree" as a sandbox.
const NotIsolation = "a worktree is a directory switch, not isolation: everything outside it, the rest of the repository included, stays as reachable as before"

// enter switches, resumes or creates, with the session lock held.
func enter(ctx context.Context, repo *repo.Repo, root string, active *Session, opts EnterOptions) (*EnterResult, error) {
	var err error
	if opts.Path != "" {
		return enterPath(ctx, repo, root, active, opts)
	}
	if active != nil {
		return nil, errs.Policyf("already in a worktree session; use --path to switch or exit first (session %q is in %s)", active.Session, active.WorktreePath)
	}
	if opts.Name == "" {
		opts.Name, err = randomName(func(n string) bool {
			return exists(managedPath(root, n)) || branchExists(repo, BranchPrefix+n)
		})
		if err != nil {
			return nil, err
		}
	}
	dir := managedPath(root, opts.Name)
	if err := checkNotNested(root, opts.Name); err != nil {
		return nil, err
	}
	if exists(dir) {
		return resume(ctx, repo, root, dir, opts)
	}
	return create(ctx, repo, root, dir, opts)
}

func checkEnterOptions(opts *EnterOptions) error {
	if opts.Name != "" && opts.Path != "" {
		return errs.Usagef("--name and --path exclude each other: --name creates or resumes a managed worktree, --path enters an existing one")
	}
	if opts.Path != "" && opts.Base != "" {
		return errs.Usagef("--base applies only when a worktree is created; --path enters an existing one")
	}
	if opts.Name != "" {
		if err := ValidateName(opts.Name); err != nil {
			return err
		}
	}
	if opts.Base == "" && opts.Config != nil {
		opts.Base = opts.Config.Worktree.Base
	}
	if opts.Base == "" {
		opts.Base = "fresh"
	}
	if opts.Base != "head" && opts.Base != "fresh" {
		return errs.Usagef("--base must be head or fresh, not %q", opts.Base)
	}
	if opts.Target != "" {
		if opts.Config == nil {
			return errs.NotFoundf("unknown target %q: this repository has no %s; add one with a [targets.%s] table, or enter without --target", opts.Target, workspace.FileName, opts.Target)
		}
		if _, err := (&workspace.Workspace{Config: opts.Config}).Target(opts.Target); err != nil {
			return err
		}
	}
	var err error
	if opts.Session == "" {
		if opts.Session, err = SessionName(); err != nil {
			return err
		}
	}
	if opts.Cwd, err = filepath.Abs(opts.Cwd); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot read the current directory")
	}
	return nil
}

func create(ctx context.Context, r *repo.Repo, root, dir string, opts EnterOptions) (*EnterResult, error) {
	branch := BranchPrefix + opts.Name
	if branchExists(r, branch) {
		return nil, errs.Policyf("branch %s already exists but %s does not; delete the branch (`git branch -D %s`) or choose another name", branch, dir, branch)
	}
	baseRef, commit, err := resolveBase(ctx, r, opts.Base)
	if err != nil {
		return nil, err
	}
	added, err := repo.IgnoreWorktrees(root)
	if err != nil {
		return nil, err
	}
	// The binding comes first: the reference-transaction hook checks the
	// branch's creation against it.
	if err := writeBinding(ctx, r, &Binding{Name: opts.Name, Branch: branch, Target: opts.Target, BaseCommit: commit}); err != nil {
		return nil, err
	}
	if _, err := git.Run(ctx, git.Cmd{Dir: root, Args: []string{"worktree", "add", "--quiet", "-b", branch, "--", dir, commit}}); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create worktree %s", dir)
	}
	now := time.Now().UTC().Truncate(time.Second)
	rec := &record{Name: opts.Name, Branch: branch, Base: opts.Base, BaseRef: baseRef, BaseCommit: commit, CreatedAt: now}
	if err := writeTOML(recordFile(r, opts.Name), rec); err != nil {
		return nil, fmt.Errorf("%w (worktree %s was created; enter it again with --name %s)", err, dir, opts.Name)
	}
	s := &Session{
		Session: opts.Session, Kind: Created, WorktreeName: opts.Name, WorktreePath: dir, WorktreeBranch: branch,
		RepoRoot: root, OriginalCwd: opts.Cwd, Base: opts.Base, BaseRef: baseRef, BaseCommit: commit,
		Target: opts.Target, EnteredAt: now,
	}
	if err := saveSession(r, s); err != nil {
		return nil, fmt.Errorf("%w (worktree %s was created; enter it again with --name %s)", err, dir, opts.Name)
	}
	msg := fmt.Sprintf("Created worktree %s on branch %s from %s (%s)", dir, branch, baseRef, git.Short(commit))
	if added {
		msg += "; added " + repo.IgnoreLine + " to .gitignore"
	}
	return &EnterResult{Session: *s, GitignoreUpdated: added, Message: msg + targetNote(s.Target)}, nil
}

func resume(ctx context.Context, repo *repo.Repo, root, dir string, opts EnterOptions) (*EnterResult, error) {
	wt, err := findWorktree(ctx, repo, dir)
	if err != nil {
		return nil, err
	}
	if wt == nil {
		return nil, errs.Policyf("%s exists but is not a worktree of this repository; move it away or choose another name", dir)
	}
	rec, err := loadRecord(repo, opts.Name)
	if err != nil {
		return nil, err
	}
	s := &Session{
		Session: opts.Session, Kind: Resumed, WorktreeName: opts.Name, WorktreePath: wt.Path, WorktreeBranch: wt.Branch,
		RepoRoot: root, OriginalCwd: opts.Cwd, Target: opts.Target, EnteredAt: time.Now().UTC().Truncate(time.Second),
	}
	if rec != nil {
		s.Base, s.BaseRef, s.BaseCommit = rec.Base, rec.BaseRef, rec.BaseCommit
	}
	if s.Target, err = rebind(ctx, repo, opts.Name, opts.Target, s.BaseCommit, wt.Head); err != nil {
		return nil, err
	}
	if err := saveSession(repo, s); err != nil {
		return nil, err
	}
	return &EnterResult{Session: *s, Message: fmt.Sprintf("Resumed worktree %s on branch %s", wt.Path, branchOrDetached(wt.Branch)) + targetNote(s.Target)}, nil
}

// rebind keeps a resumed worktree's binding: its target cannot change once
// set (a session cannot move itself to a target with wider rules), a
// worktree bound to none may be given one, and a worktree without a binding
// (made before hone kept them) gets one. It returns the target in force.
func rebind(ctx context.Context, r *repo.Repo, name, target, base, head string) (string, error) {
	b, ok, err := ReadBinding(r, name)
	if err != nil {
		return "", err
	}
	if ok && (target == "" || target == b.Target) {
		return b.Target, nil
	}
	if ok && b.Target != "" {
		return "", errs.Policyf("worktree %s is bound to target %q, and a managed worktree keeps its target; enter it without --target, or create another worktree for %q", name, b.Target, target)
	}
	if !ok {
		if base == "" {
			base = head
		}
		b = &Binding{Name: name, Branch: BranchPrefix + name, BaseCommit: base}
	}
	b.Target = target
	return target, writeBinding(ctx, r, b)
}

// enterPath enters any existing worktree git lists. When a session is active
// it is moved there: the previous worktree stays on disk untouched, Exit still
// returns to the directory the session started from, and the new worktree,
// not made by this session, is never removed by Exit.
func enterPath(ctx context.Context, repo *repo.Repo, root string, active *Session, opts EnterOptions) (*EnterResult, error) {
	p := opts.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(opts.Cwd, p)
	}
	wt, err := findWorktree(ctx, repo, p)
	if err != nil {
		return nil, err
	}
	switch {
	case wt == nil:
		return nil, errs.NotFoundf("%s is not a worktree of this repository; `git worktree list` shows the ones --path can enter", p)
	case wt.Bare:
		return nil, errs.Policyf("%s is the bare repository, not a worktree; choose a worktree with a checkout", p)
	case wt.Prunable:
		return nil, errs.NotFoundf("worktree %s is registered but missing on disk; run `git worktree prune` or choose another", wt.Path)
	}
	if active != nil && canonical(active.WorktreePath) == canonical(wt.Path) {
		return &EnterResult{Session: *active, Message: "Already in this worktree session at " + active.WorktreePath}, nil
	}
	if name, ok := strings.CutPrefix(canonical(wt.Path), canonical(filepath.Join(root, ManagedDir))+string(filepath.Separator)); ok {
		b, found, err := ReadBinding(repo, filepath.ToSlash(name))
		if err != nil {
			return nil, err
		}
		if found && b.Target != "" && opts.Target != "" && opts.Target != b.Target {
			return nil, errs.Policyf("worktree %s is bound to target %q, and a managed worktree keeps its target; enter it without --target", wt.Path, b.Target)
		}
		if found && opts.Target == "" {
			opts.Target = b.Target
		}
	}
	s := &Session{
		Session: opts.Session, Kind: ByPath, WorktreePath: wt.Path, WorktreeBranch: wt.Branch, RepoRoot: root,
		OriginalCwd: opts.Cwd, BaseCommit: wt.Head, Target: opts.Target, EnteredAt: time.Now().UTC().Truncate(time.Second),
	}
	msg := fmt.Sprintf("Entered worktree %s on branch %s; it was not made by this session, so exit never removes it", wt.Path, branchOrDetached(wt.Branch))
	if active != nil {
		s.OriginalCwd = active.OriginalCwd
		if s.Target == "" {
			s.Target = active.Target
		}
		msg = fmt.Sprintf("Switched to worktree %s on branch %s; the previous worktree %s is left untouched, and exit never removes %s", wt.Path, branchOrDetached(wt.Branch), active.WorktreePath, wt.Path)
	}
	if err := saveSession(repo, s); err != nil {
		return nil, err
	}
	return &EnterResult{Session: *s, Message: msg + targetNote(s.Target)}, nil
}

// resolveBase finds the commit a new worktree starts from. "head" is the
// current worktree's HEAD, unpushed commits included. "fresh" is the default
// branch tip as the remote last showed it, because a local branch may be
// stale: origin/HEAD when the remote names one; else origin/<the local
// default branch>, the local default being the first local branch of
// init.defaultBranch, main, master; else origin/<the first of those the
// remote has>; else the local default branch. A repository with none of them
// is refused rather than silently given HEAD.
func resolveBase(ctx context.Context, repo *repo.Repo, base string) (ref, commit string, err error) {
	st := repo.Store("")
	if base == "head" {
		h, err := st.ResolveCommit(ctx, "HEAD")
		if err != nil {
			return "", "", errs.NotFoundf("HEAD of %s has no commit yet; commit something first", repo.Root)
		}
		if ref, ok, _ := st.Symref("HEAD"); ok && strings.HasPrefix(ref, "refs/heads/") {
			return "HEAD (" + strings.TrimPrefix(ref, "refs/heads/") + ")", h.String(), nil
		}
		return "HEAD", h.String(), nil
	}
	if c, ok := refCommit(st, "refs/remotes/origin/HEAD"); ok {
		return "origin/HEAD", c, nil
	}
	candidates := []string{"main", "master"}
	if def, err := git.Output(ctx, repo.Root, "config", "--get", "init.defaultBranch"); err == nil && def != "" {
		candidates = append([]string{def}, candidates...)
	}
	local, localCommit := "", ""
	for _, b := range candidates {
		if c, ok := refCommit(st, "refs/heads/"+b); ok {
			local, localCommit = b, c
			break
		}
	}
	remote := candidates
	if local != "" {
		remote = append([]string{local}, candidates...)
	}
	for _, b := range remote {
		if c, ok := refCommit(st, "refs/remotes/origin/"+b); ok {
			return "origin/" + b, c, nil
		}
	}
	if local != "" {
		return local, localCommit, nil
	}
	return "", "", errs.NotFoundf("--base fresh needs the default branch, but there is no origin/HEAD and no origin/ or local branch %s; use --base head, or set [worktree] base = \"head\" in %s", strings.Join(candidates, ", "), workspace.FileName)
}

// checkNotNested refuses a name that would put a worktree inside another
// managed worktree ("a/b" while "a" exists).
func checkNotNested(root, name string) error {
	segs := strings.Split(name, "/")
	for i := 1; i < len(segs); i++ {
		outer := strings.Join(segs[:i], "/")
		if exists(filepath.Join(managedPath(root, outer), ".git")) {
			return errs.Policyf("worktree name %q would nest inside the managed worktree %q; choose another name", name, outer)
		}
	}
	return nil
}

// findWorktree returns git's entry for the worktree at path, or nil.
func findWorktree(ctx context.Context, repo *repo.Repo, path string) (*gitWorktree, error) {
	list, err := listGitWorktrees(ctx, repo)
	if err != nil {
		return nil, err
	}
	want := canonical(path)
	for i := range list {
		if canonical(list[i].Path) == want {
			return &list[i], nil
		}
	}
	return nil, nil
}

func managedPath(root, name string) string {
	return filepath.Join(root, ManagedDir, filepath.FromSlash(name))
}

// refCommit is the commit ref holds, following one symbolic ref (a
// remote's HEAD); ok is false when it holds none.
func refCommit(st repo.Store, ref string) (string, bool) {
	if target, ok, err := st.Symref(ref); err == nil && ok {
		ref = target
	}
	h, ok, err := st.Read(ref)
	return h.String(), ok && err == nil
}

func branchExists(repo *repo.Repo, branch string) bool {
	_, ok, err := repo.Store("").Read("refs/heads/" + branch)
	return ok && err == nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func branchOrDetached(b string) string {
	if b == "" {
		return "(detached HEAD)"
	}
	return b
}

func targetNote(target string) string {
	if target == "" {
		return ""
	}
	return fmt.Sprintf("; bound to target %q", target)
}
