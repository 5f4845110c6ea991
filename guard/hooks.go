package guard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hone-perf/hone/internal/atomicfile"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/worktree"
)

// hookMarker identifies a hook file written by hone.
const hookMarker = "# hone-hook:"

// Hooks are the client-side hooks hone installs, each calling a guard.
var Hooks = []string{"pre-commit", "pre-push", "reference-transaction"}

// script is what install writes into one hook: the hone binary by the
// absolute path it had at install (never looked up on PATH, which an agent
// may change), and the guarded refs as shell patterns, so that without hone
// a guarded ref update fails closed while git keeps working everywhere else.
type script struct {
	hone     string
	patterns []string // every guarded ref (reference-transaction)
	pushed   []string // the guarded refs a push may target (pre-push)
}

// shPattern makes a ref pattern a shell case pattern: "*" stays a wildcard,
// every other character is literal.
func shPattern(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '*', r == '/', r == '.', r == '-', r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('\\')
			b.WriteRune(r)
		}
	}
	return b.String()
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }

func casePatterns(ps []string) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = shPattern(p)
	}
	return strings.Join(out, "|")
}

// guards says what hook name guards, for `hone hooks install` to show.
func (s script) guards(name string) []string {
	switch name {
	case "pre-commit":
		return []string{"staged changes in a managed worktree (" + worktree.ManagedDir + "/NAME), held to the target of its binding", "staged changes anywhere while HONE_TARGET names a target"}
	case "pre-push":
		var out []string
		for _, p := range s.pushed {
			out = append(out, "pushes to "+p+", held to the target the ref names")
		}
		return out
	}
	out := append([]string(nil), s.patterns...)
	return append(out, "refs/heads/* updated inside "+worktree.ManagedDir+"/, held to the worktree's binding")
}

// text returns the hook named name. A hook that was there before is kept as
// <name>.hone-chained and runs first; its failure stops git as it did before.
func (s script) text(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n%s installed by `hone hooks install`; `hone hooks uninstall` removes it\n", hookMarker)
	b.WriteString("# and restores the hook it chains, kept beside it with the suffix .hone-chained.\n")
	fmt.Fprintf(&b, "hone=%s\n", shQuote(s.hone))
	fmt.Fprintf(&b, "chained=\"$(dirname \"$0\")/%s.hone-chained\"\n", name)
	// No backquotes: inside the double quotes the shell would run them.
	missing := `echo "hone: $hone is missing; refusing to %s (reinstall hone there, or run: hone hooks uninstall)" >&2` + "\n\texit 1\n"
	switch name {
	case "pre-commit":
		b.WriteString("if [ -x \"$chained\" ]; then\n\t\"$chained\" \"$@\" || exit $?\nfi\n")
		b.WriteString("if [ ! -x \"$hone\" ]; then\n\tcase \"$PWD/\" in */" + worktree.ManagedDir + "/*)\n\t")
		fmt.Fprintf(&b, missing, "commit in a managed worktree")
		b.WriteString("\tesac\n\texit 0\nfi\n")
		b.WriteString("exec \"$hone\" guard pre-commit\n")
	case "pre-push":
		// The push's ref list arrives on stdin; both hooks need it.
		b.WriteString("input=$(cat)\n")
		b.WriteString("if [ -x \"$chained\" ]; then\n\tprintf '%s\\n' \"$input\" | \"$chained\" \"$@\" || exit $?\nfi\n")
		b.WriteString("if [ ! -x \"$hone\" ]; then\n")
		fmt.Fprintf(&b, "\tguarded=$(printf '%%s\\n' \"$input\" | while read -r lref lsha rref rsha; do case \"$rref\" in %s) echo \"$rref\" ;; esac; done)\n", casePatterns(s.pushed))
		b.WriteString("\tif [ -n \"$guarded\" ]; then\n\t")
		fmt.Fprintf(&b, missing, "push to a guarded ref")
		b.WriteString("\tfi\n\texit 0\nfi\n")
		b.WriteString("printf '%s\\n' \"$input\" | \"$hone\" guard pre-push \"$@\"\n")
	case "reference-transaction":
		b.WriteString("input=$(cat)\n")
		b.WriteString("if [ -x \"$chained\" ]; then\n\tprintf '%s\\n' \"$input\" | \"$chained\" \"$@\" || exit $?\nfi\n")
		b.WriteString("[ \"$1\" = prepared ] || exit 0\n")
		b.WriteString("# In a managed worktree every branch is held to the worktree's binding.\n")
		b.WriteString("inside=\ncase \"$PWD/\" in */" + worktree.ManagedDir + "/*) inside=1 ;; esac\n")
		b.WriteString("guarded=$(printf '%s\\n' \"$input\" | while read -r old new ref; do\n\tcase \"$ref\" in\n")
		fmt.Fprintf(&b, "\t%s) printf '%%s %%s %%s\\n' \"$old\" \"$new\" \"$ref\" ;;\n", casePatterns(s.patterns))
		b.WriteString("\trefs/heads/*) if [ -n \"$inside\" ]; then printf '%s %s %s\\n' \"$old\" \"$new\" \"$ref\"; fi ;;\n")
		b.WriteString("\tesac\ndone)\n")
		b.WriteString("[ -n \"$guarded\" ] || exit 0\n")
		b.WriteString("if [ ! -x \"$hone\" ]; then\n\t")
		fmt.Fprintf(&b, missing, "update a guarded ref")
		b.WriteString("fi\n")
		b.WriteString("printf '%s\\n' \"$guarded\" | \"$hone\" guard ref-update \"$1\"\n")
	}
	return b.String()
}

// HookAction reports what install or uninstall did to one hook.
type HookAction struct {
	Hook   string `json:"hook"`
	Path   string `json:"path"`
	Action string `json:"action"` // installed, updated, chained, replaced, removed, restored, absent, foreign
	// Install only: the hone binary the hook calls, and what it guards.
	Hone   string   `json:"hone,omitempty"`
	Guards []string `json:"guards,omitempty"`
}

// HooksDir is the directory git runs hooks from for the repository at dir,
// core.hooksPath included.
func HooksDir(ctx context.Context, dir string) (string, error) {
	top, err := git.Output(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", errs.Wrap(errs.NotFound, err, "not inside a git working tree")
	}
	p, err := git.Output(ctx, top, "rev-parse", "--git-path", "hooks")
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot find the hooks directory")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(top, p)
	}
	return p, nil
}

// InstallHooks writes hone's hooks, which call the hone binary at honePath
// and guard what p guards. An existing foreign hook is chained, not
// overwritten. When a foreign hook and a chained one both exist, install
// refuses unless force is set; force then saves the foreign hook as
// <name>.hone-backup before replacing it.
func InstallHooks(ctx context.Context, dir string, pol *Policy, honePath string, force bool) ([]HookAction, error) {
	if !filepath.IsAbs(honePath) {
		return nil, errs.Failuref("hooks must call hone by an absolute path, not %q", honePath)
	}
	hooks, err := HooksDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	sc := script{hone: honePath, patterns: pol.Patterns(), pushed: pol.PushPatterns()}
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", hooks)
	}
	var out []HookAction
	for _, name := range Hooks {
		p := filepath.Join(hooks, name)
		chained := p + ".hone-chained"
		act := HookAction{Hook: name, Path: p, Action: "installed", Hone: honePath, Guards: sc.guards(name)}
		cur, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return out, errs.Wrap(errs.Failure, err, "cannot read %s", p)
		case strings.Contains(string(cur), hookMarker):
			act.Action = "updated"
		case exists(chained) && !force:
			return out, errs.Policyf("refused: %s is not hone's and %s already exists; merge them by hand, or use --force to replace %s (it is saved as %s.hone-backup)", p, chained, name, name)
		case exists(chained):
			if err := os.Rename(p, p+".hone-backup"); err != nil {
				return out, errs.Wrap(errs.Failure, err, "cannot back up %s", p)
			}
			act.Action = "replaced"
		default:
			if err := os.Rename(p, chained); err != nil {
				return out, errs.Wrap(errs.Failure, err, "cannot keep %s", p)
			}
			act.Action = "chained"
		}
		if err := writeHook(p, sc.text(name)); err != nil {
			return out, err
		}
		out = append(out, act)
	}
	return out, nil
}

// UninstallHooks removes hone's hooks and puts chained hooks back. A hook
// that is not hone's is left alone.
func UninstallHooks(ctx context.Context, dir string) ([]HookAction, error) {
	hooks, err := HooksDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []HookAction
	for _, name := range Hooks {
		p := filepath.Join(hooks, name)
		act := HookAction{Hook: name, Path: p, Action: "absent"}
		cur, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return out, errs.Wrap(errs.Failure, err, "cannot read %s", p)
		case !strings.Contains(string(cur), hookMarker):
			act.Action = "foreign"
		default:
			act.Action = "removed"
			if exists(p + ".hone-chained") {
				if err := os.Rename(p+".hone-chained", p); err != nil {
					return out, errs.Wrap(errs.Failure, err, "cannot restore %s", p)
				}
				act.Action = "restored"
			} else if err := os.Remove(p); err != nil {
				return out, errs.Wrap(errs.Failure, err, "cannot remove %s", p)
			}
		}
		out = append(out, act)
	}
	return out, nil
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// writeHook replaces a hook file atomically, executable.
func writeHook(p, script string) error {
	if err := atomicfile.Write(p, []byte(script), 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", p)
	}
	return nil
}
