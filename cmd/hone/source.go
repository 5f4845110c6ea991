package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/source"
)

func init() { register("source", command(newSourceCmd)) }

type sourceOptions struct {
	*factory
	out output

	Target string
	Path   string // "" is the target's top directory
	Offset int
	Limit  int
}

func newSourceCmd(f *factory, runF func(*sourceOptions) error) *cobra.Command {
	opts := &sourceOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "source TARGET [PATH] [--offset N] [--limit N] [--json]",
		Short: "Show a target's file or directory as it is at the pin",
		Long: fmt.Sprintf(`Show PATH of TARGET exactly as it is at the target's pin commit, read from
git's objects, never from the working tree. PATH is relative to the target's
path (wordfreq.c for targets/wordfreq/wordfreq.c); the path from the
repository's top level, as hone profile show prints it, works too (when a
path names a file both ways, the one inside the target is shown). Without
PATH, the target's top directory is listed.

A file is printed with line numbers, after a header giving the pin and which
lines of how many are shown. --offset N starts at line N (1-based, like the
numbers printed; 0 means 1); --limit N shows at most N lines (default %d). When
lines remain, a last line says which --offset continues. Lines longer than %d
bytes are cut. A binary file (a NUL byte in its first 8000 bytes) is
described, not printed. A directory lists its entries: type, size and name.
A symlink is shown as its target and never followed.

Absolute paths, '..', any spelling of .git, and paths through a symlink are
refused (exit 3); a path absent at the pin exits 4.

--json fields: target, pin, pin_commit, path, repo_path, type (file, dir,
symlink, submodule); for files size, binary, total_lines, offset, lines
[{number, text, cut}], truncated, next_offset; for directories entries
[{name, type, size, executable}]; link_target for symlinks.`, source.DefaultLimit, source.MaxLineBytes),
		Example: `  hone source wordfreq
  hone source wordfreq wordfreq.c --offset 57 --limit 10`,
		Annotations:       exits(errs.Policy, errs.NotFound, errs.Invalid),
		Args:              rangeArgs(1, 2),
		ValidArgsFunction: completeTargets(f),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			if len(args) == 2 {
				opts.Path = args[1]
			}
			return nil
		}, sourceRun),
	}
	cmd.Flags().IntVar(&opts.Offset, "offset", 0, "first line to show, 1-based")
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, fmt.Sprintf("most lines to show (default %d)", source.DefaultLimit))
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func sourceRun(ctx context.Context, opts *sourceOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	v, err := source.Read(ctx, ws, opts.Target, opts.Path, opts.Offset, opts.Limit)
	if err != nil {
		return err
	}
	return opts.out.print(v, func(w io.Writer) error { return writeSource(w, v) })
}

func writeSource(w io.Writer, v *source.View) error {
	at := fmt.Sprintf("%s at %s (%s)", v.RepoPath, v.Pin, git.Short(v.PinCommit))
	switch v.Type {
	case source.Dir:
		fmt.Fprintf(w, "%s: directory, %d entries\n", at, len(v.Entries))
		for _, e := range v.Entries {
			size, name := "-", e.Name
			switch e.Type {
			case source.File:
				size = fmt.Sprint(e.Size)
			case source.Dir:
				name += "/"
			}
			fmt.Fprintf(w, "%-9s %10s  %s\n", e.Type, size, name)
		}
	case source.Symlink:
		fmt.Fprintf(w, "%s: symlink to %s (not followed)\n", at, v.LinkTarget)
	case source.Submodule:
		fmt.Fprintf(w, "%s: submodule at commit %s (not shown)\n", at, v.Commit)
	default:
		if v.Binary {
			fmt.Fprintf(w, "%s: binary file, %d bytes (not shown)\n", at, v.Size)
			return nil
		}
		if len(v.Lines) == 0 {
			fmt.Fprintf(w, "%s: no lines shown (the file has %d)\n", at, v.TotalLines)
			return nil
		}
		first, last := v.Lines[0].Number, v.Lines[len(v.Lines)-1].Number
		fmt.Fprintf(w, "%s: lines %d-%d of %d\n", at, first, last, v.TotalLines)
		for _, l := range v.Lines {
			cut := ""
			if l.Cut {
				cut = fmt.Sprintf(" [line cut at %d bytes]", source.MaxLineBytes)
			}
			fmt.Fprintf(w, "%6d\t%s%s\n", l.Number, l.Text, cut)
		}
		if v.Truncated {
			fmt.Fprintf(w, "... %d more lines; continue with --offset %d\n", v.TotalLines-last, v.NextOffset)
		}
	}
	return nil
}

// completeTargets completes the first argument with the workspace's target
// names; it stays silent outside a workspace.
func completeTargets(f *factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ws, err := f.workspace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return ws.TargetNames(), cobra.ShellCompDirectiveNoFileComp
	}
}
