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
)

// hookMarker identifies a hook file written by hone.
const hookMarker = "# hone-hook:"

// Hooks are the client-side hooks hone installs, each calling a guard.
var Hooks = []string{"pre-commit", "pre-push"}

// hookScript returns the script of one hook. A hook that was there before is
// kept as <name>.hone-chained and runs first; its failure stops the commit or
// push as it did before. $HONE overrides the hone binary on PATH.
func hookScript(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n%s installed by `hone hooks install`; `hone hooks uninstall` removes it\n", hookMarker)
	b.WriteString("# and restores the hook it chains, kept beside it with the suffix .hone-chained.\n")
	fmt.Fprintf(&b, "chained=\"$(dirname \"$0\")/%s.hone-chained\"\n", name)
	if name == "pre-push" {
		// The push's ref list arrives on stdin; both hooks need it.
		b.WriteString("input=$(cat)\n")
		b.WriteString("if [ -x \"$chained\" ]; then\n\tprintf '%s\\n' \"$input\" | \"$chained\" \"$@\" || exit $?\nfi\n")
		b.WriteString("printf '%s\\n' \"$input\" | \"${HONE:-hone}\" guard pre-push \"$@\"\n")
		return b.String()
	}
	b.WriteString("if [ -x \"$chained\" ]; then\n\t\"$chained\" \"$@\" || exit $?\nfi\n")
	fmt.Fprintf(&b, "exec \"${HONE:-hone}\" guard %s\n", name)
	return b.String()
}

// HookAction reports what install or uninstall did to one hook.
type HookAction struct {
	Hook   string `json:"hook"`
	Path   string `json:"path"`
	Action string `json:"action"` // installed, updated, chained, replaced, removed, restored, absent, foreign
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

// InstallHooks writes hone's hooks. An existing foreign hook is chained, not
// overwritten. When a foreign hook and a chained one both exist, install
// refuses unless force is set; force then saves the foreign hook as
// <name>.hone-backup before replacing it.
func InstallHooks(ctx context.Context, dir string, force bool) ([]HookAction, error) {
	hooks, err := HooksDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", hooks)
	}
	var out []HookAction
	for _, name := range Hooks {
		p := filepath.Join(hooks, name)
		chained := p + ".hone-chained"
		act := HookAction{Hook: name, Path: p, Action: "installed"}
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
		if err := writeHook(p, hookScript(name)); err != nil {
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
