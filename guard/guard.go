// Package guard holds work that does not go through hone to a target's
// allowlist where git moves refs: commits, staged changes, and pushes
// (pre-push on the client, pre-receive on the server), and installs the git
// hooks that call it. It applies the rules of package allowlist, as
// `hone patch propose` does.
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
	"github.com/hone-perf/hone/workspace"
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

// Violated is the Policy error a guard returns with its violations.
func Violated(vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	return errs.Policyf("refused: %d change(s) outside the target's allowlist; first: %s", len(vs), vs[0])
}

const zeroHash = "0000000000000000000000000000000000000000"

// Commits checks every commit rev-list selects (args as for `git
// rev-list`) against each of its parents: a merge can add a file that a
// first-parent diff hides. Rename detection is off so a move's source is
// checked too; a root commit is checked against the empty tree.
func Commits(ctx context.Context, dir string, a allowlist.Rules, revs ...string) ([]Violation, error) {
	out, err := git.Output(ctx, dir, append([]string{"rev-list", "--parents"}, revs...)...)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "cannot list the commits %s", strings.Join(revs, " "))
	}
	var vs []Violation
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
				return nil, errs.Wrap(errs.Failure, err, "cannot diff commit %s", ids[0])
			}
			changes, err := git.ParseRaw(raw)
			if err != nil {
				return nil, errs.Wrap(errs.Failure, err, "cannot diff commit %s", ids[0])
			}
			vs = append(vs, violations(changes, a, ids[0], p)...)
		}
	}
	return vs, nil
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

// RefUpdate is one line of a pre-receive or pre-push hook's input.
type RefUpdate struct {
	Ref      string // the ref being updated (on the receiving side)
	Old, New string
}

// ReadPreReceive parses "<old> <new> <ref>" lines.
func ReadPreReceive(r io.Reader) ([]RefUpdate, error) {
	return readUpdates(r, 3, func(f []string) RefUpdate { return RefUpdate{Old: f[0], New: f[1], Ref: f[2]} })
}

// ReadPrePush parses "<local ref> <local sha> <remote ref> <remote sha>" lines.
func ReadPrePush(r io.Reader) ([]RefUpdate, error) {
	return readUpdates(r, 4, func(f []string) RefUpdate { return RefUpdate{New: f[1], Ref: f[2], Old: f[3]} })
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
			return nil, errs.Invalidf("hook input line %q: want %d fields", sc.Text(), n)
		}
		out = append(out, mk(f))
	}
	return out, sc.Err()
}

// Refs checks ref updates whose name matches a [guard] refs pattern,
// against the target named in the ref. exclude lists rev-list arguments that
// mark commits already trusted (for pre-receive: "--all"; for pre-push: the
// remote's refs); the target's pin is always trusted.
func Refs(ctx context.Context, dir string, cfg *workspace.Config, updates []RefUpdate, exclude ...string) ([]Violation, error) {
	var vs []Violation
	for _, u := range updates {
		name, ok := TargetOf(cfg.Guard.Refs, u.Ref)
		if !ok || strings.Trim(u.New, "0") == "" {
			continue
		}
		t, found := cfg.Targets[name]
		if !found {
			vs = append(vs, Violation{Ref: u.Ref, Rule: fmt.Sprintf("the ref names target %q, which hone.toml does not define", name)})
			continue
		}
		revs := append([]string{u.New, "--not"}, exclude...)
		if pin, err := git.Output(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", t.Pin+"^{commit}"); err == nil {
			revs = append(revs, pin)
		}
		if strings.Trim(u.Old, "0") != "" {
			if _, err := git.Output(ctx, dir, "cat-file", "-e", u.Old+"^{commit}"); err == nil {
				revs = append(revs, u.Old)
			}
		}
		found2, err := Commits(ctx, dir, t.Rules(), revs...)
		if err != nil {
			return nil, err
		}
		for _, v := range found2 {
			v.Ref = u.Ref
			vs = append(vs, v)
		}
	}
	return vs, nil
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

// LoadConfig reads hone.toml for a guard: in a bare repository (a server
// running pre-receive) from HEAD:hone.toml, else from the workspace around dir.
func LoadConfig(ctx context.Context, dir string) (*workspace.Config, error) {
	bare, err := git.Output(ctx, dir, "rev-parse", "--is-bare-repository")
	if err != nil {
		return nil, errs.Wrap(errs.NotFound, err, "not inside a git repository")
	}
	if bare != "true" {
		ws, err := workspace.Open(dir)
		if err != nil {
			return nil, err
		}
		return ws.Config, nil
	}
	b, err := git.Run(ctx, git.Cmd{Dir: dir, Args: []string{"show", "HEAD:" + workspace.FileName}})
	if err != nil {
		return nil, errs.Wrap(errs.NotFound, err, "this bare repository has no %s on HEAD; commit one to the default branch", workspace.FileName)
	}
	return workspace.Parse("HEAD:"+workspace.FileName, b)
}
