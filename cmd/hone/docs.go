package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/refdoc"
)

func init() { register("docs", newDocsCmd) }

func newDocsCmd(app *App) *cobra.Command {
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
	cmd.AddCommand(newDocsGenCmd(app, "man", "Write a man page (section 1) for every command into DIR",
		func(root *cobra.Command, dir string) ([]string, error) {
			return refdoc.Man(root, dir, refdoc.ManHeader{Section: "1", Source: "hone " + honeVersion(), Manual: "hone manual"})
		}))
	cmd.AddCommand(newDocsGenCmd(app, "markdown", "Write a markdown page for every command into DIR", refdoc.Markdown))
	return cmd
}

// newDocsGenCmd builds one generator subcommand; gen writes the pages and
// returns their paths, which the command lists.
func newDocsGenCmd(app *App, use, short string, gen func(root *cobra.Command, dir string) ([]string, error)) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     use + " DIR",
		Short:   short,
		Long:    short + ". DIR, relative to the current directory, is created when missing.",
		Example: fmt.Sprintf("  hone docs %s ./reference", use),
		Args:    exactArgs(1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return errs.Wrap(errs.Failure, err, "cannot create %s", dir)
			}
			// The pages document every command, not just the ones this
			// invocation built.
			root := newRoot(app, nil)
			withExitStatus(root)
			files, err := gen(root, dir)
			if err != nil {
				return errs.Wrap(errs.Failure, err, "cannot write the %s pages into %s", use, dir)
			}
			if asJSON {
				return app.printJSON(map[string]any{"dir": dir, "files": files})
			}
			for _, f := range files {
				fmt.Fprintln(app.Out, f)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the written files as JSON: {\"dir\", \"files\"}")
	return cmd
}
