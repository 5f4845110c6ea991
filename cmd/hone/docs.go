package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/refdoc"
)

func init() { register("docs", newDocsCmd) }

func newDocsCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "docs",
		Short: "Generate hone's manual pages or markdown reference",
		Long: `Generate reference documentation for every hone command from the commands
themselves, so it never drifts from --help.

  hone docs man DIR        one man page per command (hone.1, hone-verdict.1, ...)
  hone docs markdown DIR   one markdown file per command (hone.md, hone_verdict.md, ...)

DIR (relative to the current directory) is created when missing; existing
files of the same names are replaced. Each command prints the files it wrote,
one per line.`,
		Example: `  hone docs man /usr/local/share/man/man1
  hone docs markdown docs/reference`,
	}
	cmd.AddCommand(newDocsGenCmd(f, "man", "Write a man page (section 1) for every command into DIR",
		func(root *cobra.Command, dir string) ([]string, error) {
			return refdoc.Man(root, dir, refdoc.ManHeader{Section: "1", Source: "hone " + honeVersion(), Manual: "hone manual"})
		}, nil))
	cmd.AddCommand(newDocsGenCmd(f, "markdown", "Write a markdown page for every command into DIR", refdoc.Markdown, nil))
	return cmd
}

// newDocsGenCmd builds one generator subcommand; gen writes the pages and
// returns their paths, which the command lists.
type docsGenOptions struct {
	*factory
	out output

	Dir  string
	Kind string // man or markdown
	Gen  func(root *cobra.Command, dir string) ([]string, error)
}

func newDocsGenCmd(f *factory, use, short string, gen func(root *cobra.Command, dir string) ([]string, error), runF func(*docsGenOptions) error) *cobra.Command {
	opts := &docsGenOptions{factory: f, out: f.output(), Kind: use, Gen: gen}
	cmd := &cobra.Command{
		Use:     use + " DIR",
		Short:   short,
		Long:    short + ". DIR, relative to the current directory, is created when missing.",
		Example: fmt.Sprintf("  hone docs %s ./reference", use),
		Args:    exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return nil
		}, docsGenRun),
	}
	addJSONFlag(cmd, &opts.out, "print the written files as JSON: {\"dir\", \"files\"}")
	return cmd
}

func docsGenRun(_ context.Context, opts *docsGenOptions) error {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", opts.Dir)
	}
	// The pages document every command, not just the ones this
	// invocation built.
	root := newRoot(opts.factory, nil)
	withExitStatus(root)
	files, err := opts.Gen(root, opts.Dir)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write the %s pages into %s", opts.Kind, opts.Dir)
	}
	return opts.out.print(map[string]any{"dir": opts.Dir, "files": files}, func(w io.Writer) error {
		for _, name := range files {
			fmt.Fprintln(w, name)
		}
		return nil
	})
}
