// Package guard holds work that does not go through hone to a target's
// allowlist wherever git moves refs: every local ref update (git's
// reference-transaction hook sees commit, merge, cherry-pick, rebase and
// --no-verify alike), staged changes, pushes leaving (pre-push) and pushes
// arriving at a server (pre-receive, which also keeps hone's own refs
// append-only and its verdicts signed), and installs the client hooks. The
// rules come from hone.toml at the protected base (see Policy), never from a
// working tree. Local hooks are an early warning that an agent with a shell
// can switch off; a server's pre-receive hook is the guarantee.
package guard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
)

// Violation is one change a guarded commit, push or index may not make.
type Violation struct {
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	Parent string `json:"parent,omitempty"` // empty for a root commit or the index
	Path   string `json:"path,omitempty"`
	Rule   string `json:"rule"`
}

func (v Violation) String() string {
	var b strings.Builder
	if v.Ref != "" {
		fmt.Fprintf(&b, "%s: ", v.Ref)
	}
	if v.Commit != "" {
		fmt.Fprintf(&b, "commit %s", git.Short(v.Commit))
		if v.Parent != "" {
			fmt.Fprintf(&b, " (against parent %s)", git.Short(v.Parent))
		}
		b.WriteString(": ")
	}
	if v.Path != "" {
		fmt.Fprintf(&b, "%q: ", v.Path)
	}
	b.WriteString(v.Rule)
	return b.String()
}

// Violated is the Policy error a guard returns with its violations: changes
// outside an allowlist, or updates of hone's refs that are not appends.
func Violated(vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	return errs.Policyf("refused: %d violation(s) of the guards' rules; first: %s", len(vs), vs[0])
}

// Commits checks every commit rev-list selects (args as for `git
// rev-list`) against each of its parents: a merge can add a file that a
// first-parent diff hides. Rename detection is off so a move's source is
// checked too; a root commit is checked against the empty tree.
func Commits(ctx context.Context, dir string, a allowlist.Rules, revs ...string) ([]Violation, error) {
	var vs []Violation
	err := eachChange(ctx, dir, revs, func(commit, parent string, changes []git.Change) {
		vs = append(vs, violations(changes, a, commit, parent)...)
	})
	return vs, err
}

// eachChange calls fn with what every commit rev-list selects changes
// against each of its parents (a root commit: against the empty tree).
func eachChange(ctx context.Context, dir string, revs []string, fn func(commit, parent string, changes []git.Change)) error {
	out, err := git.Output(ctx, dir, append([]string{"rev-list", "--parents"}, revs...)...)
	if err != nil {
		return errs.Wrap(errs.Invalid, err, "cannot list the commits %s", strings.Join(revs, " "))
	}
	for _, line := range strings.Split(out, "\n") {
		ids := strings.Fields(line)
		if len(ids) == 0 {
			continue
		}
		parents := ids[1:]
		if len(parents) == 0 {
			parents = []string{""}
		}
		for _, p := range parents {
			args := append(append([]string{"diff-tree"}, git.RawDiffArgs...), "--no-commit-id")
			if p == "" {
				args = append(args, "--root", ids[0])
			} else {
				args = append(args, p, ids[0])
			}
			raw, err := git.Run(ctx, git.Cmd{Dir: dir, Args: args})
			if err != nil {
				return errs.Wrap(errs.Failure, err, "cannot diff commit %s", ids[0])
			}
			changes, err := git.ParseRaw(raw)
			if err != nil {
				return errs.Wrap(errs.Failure, err, "cannot diff commit %s", ids[0])
			}
			fn(ids[0], p, changes)
		}
	}
	return nil
}

func violations(changes []git.Change, a allowlist.Rules, commit, parent string) []Violation {
	var vs []Violation
	for _, c := range changes {
		if rule := a.ChangeRule(c); rule != "" {
			vs = append(vs, Violation{Commit: commit, Parent: parent, Path: c.Path, Rule: rule})
		}
	}
	return vs
}

// Staged checks the staged changes (the index against HEAD, or against
// the empty tree before the first commit).
func Staged(ctx context.Context, dir string, a allowlist.Rules) ([]Violation, error) {
	base := "HEAD"
	if _, err := git.Output(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		empty, err := git.Run(ctx, git.Cmd{Dir: dir, Args: []string{"hash-object", "-t", "tree", "--stdin"}, Stdin: strings.NewReader("")})
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot name the empty tree")
		}
		base = strings.TrimSpace(string(empty))
	}
	raw, err := git.Run(ctx, git.Cmd{Dir: dir, Args: append(append([]string{"diff-index", "--cached"}, git.RawDiffArgs...), base)})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the staged changes")
	}
	changes, err := git.ParseRaw(raw)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the staged changes")
	}
	return violations(changes, a, "", ""), nil
}

// RefUpdate is one line of a hook's input.
type RefUpdate struct {
	Ref      string // the ref being updated (on the receiving side)
	Old, New string
	Local    string // pre-push: the local ref being pushed
}

// ReadRefUpdates parses "<old> <new> <ref>" lines: the input of pre-receive
// and of reference-transaction.
func ReadRefUpdates(r io.Reader) ([]RefUpdate, error) {
	return readUpdates(r, 3, func(f []string) RefUpdate { return RefUpdate{Old: f[0], New: f[1], Ref: f[2]} })
}

// ReadPrePush parses "<local ref> <local sha> <remote ref> <remote sha>" lines.
func ReadPrePush(r io.Reader) ([]RefUpdate, error) {
	return readUpdates(r, 4, func(f []string) RefUpdate { return RefUpdate{Local: f[0], New: f[1], Ref: f[2], Old: f[3]} })
}

func readUpdates(r io.Reader, n int, mk func([]string) RefUpdate) ([]RefUpdate, error) {
	var out []RefUpdate
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != n {
			return nil, errs.Invalidf("hook input line %q: want %d fields", errs.Clip(sc.Text()), n)
		}
		out = append(out, mk(f))
	}
	return out, sc.Err()
}

// TargetOf matches ref against the [guard] refs patterns and returns the
// target name taken from the ref where the pattern says <target>. "*" matches
// anything, slashes included, so no branch below a guarded prefix escapes.
func TargetOf(patterns []string, ref string) (string, bool) {
	for _, p := range patterns {
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(p); {
			switch {
			case strings.HasPrefix(p[i:], "<target>"):
				re.WriteString("([A-Za-z0-9_-]+)")
				i += len("<target>")
			case p[i] == '*':
				re.WriteString(".*")
				i++
			default:
				re.WriteString(regexp.QuoteMeta(p[i : i+1]))
				i++
			}
		}
		re.WriteString("$")
		if m := regexp.MustCompile(re.String()).FindStringSubmatch(ref); len(m) > 1 {
			return m[1], true
		}
	}
	return "", false
}
