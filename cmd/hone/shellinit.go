package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
)

func init() { register("shell-init", command(newShellInitCmd)) }

// shellFunc wraps hone so that `hone worktree enter` and `hone worktree exit`
// also change the shell's directory: a process cannot change its parent's, so
// the function runs hone, and on success cds to the directory it printed.
// --json and --help output is passed through untouched. The same text is
// valid bash and zsh.
const shellFunc = `hone() {
  if [ "${1-}" = worktree ] && { [ "${2-}" = enter ] || [ "${2-}" = exit ]; }; then
    local __hone_arg __hone_dir __hone_status
    for __hone_arg in "$@"; do
      case "$__hone_arg" in
        --json|--json=*|-h|--help) command hone "$@"; return ;;
      esac
    done
    __hone_dir="$(command hone "$@")"
    __hone_status=$?
    if [ "$__hone_status" -eq 0 ] && [ -n "$__hone_dir" ] && [ -d "$__hone_dir" ]; then
      builtin cd -- "$__hone_dir" || return
    elif [ -n "$__hone_dir" ]; then
      printf '%s\n' "$__hone_dir"
    fi
    return "$__hone_status"
  fi
  command hone "$@"
}
`

type shellInitOptions struct {
	*factory

	Shell string
}

func newShellInitCmd(f *factory, runF func(*shellInitOptions) error) *cobra.Command {
	opts := &shellInitOptions{factory: f}
	return &cobra.Command{
		Use:   "shell-init bash|zsh",
		Short: "Print a shell function so hone worktree enter/exit change directory",
		Long: `Print a shell function named hone that wraps the hone binary: after a
successful ` + "`hone worktree enter`" + ` or ` + "`hone worktree exit`" + ` it changes the shell's
directory to the one hone printed. Every other command runs unchanged.

Add to ~/.bashrc:   eval "$(hone shell-init bash)"
Add to ~/.zshrc:    eval "$(hone shell-init zsh)"`,
		Example: `  eval "$(hone shell-init bash)"
  eval "$(hone shell-init zsh)"`,
		Args:      exactArgs(1),
		ValidArgs: []string{"bash", "zsh"},
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			if args[0] != "bash" && args[0] != "zsh" {
				return errs.Usagef("unsupported shell %q; hone shell-init knows bash and zsh", args[0])
			}
			opts.Shell = args[0]
			return nil
		}, shellInitRun),
	}
}

func shellInitRun(_ context.Context, opts *shellInitOptions) error {
	_, err := fmt.Fprintf(opts.io.Out, "# hone shell integration for %s: eval \"$(hone shell-init %s)\"\n%s", opts.Shell, opts.Shell, shellFunc)
	return err
}
