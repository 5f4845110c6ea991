package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/hone-perf/hone/internal/errs"
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

DIR is created when missing; existing files of the same names are replaced.
Each command prints the files it wrote, one per line.` + exitCodes(),
		Args: exactArgs(0),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return cmd.Help()
		}),
	}
	cmd.AddCommand(newDocsGenCmd(app, "man", "Write a man page (section 1) for every command into DIR",
		func(root *cobra.Command, dir string) error {
			return doc.GenManTree(root, &doc.GenManHeader{Title: "HONE", Section: "1", Source: "hone " + version, Manual: "hone manual"}, dir)
		},
		func(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1" }))
	cmd.AddCommand(newDocsGenCmd(app, "markdown", "Write a markdown page for every command into DIR",
		func(root *cobra.Command, dir string) error { return doc.GenMarkdownTree(root, dir) },
		func(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md" }))
	return cmd
}

// newDocsGenCmd builds one generator subcommand. name mirrors the generator's
// own file naming, so the command can list exactly what it wrote.
func newDocsGenCmd(app *App, use, short string, gen func(*cobra.Command, string) error, name func(*cobra.Command) string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   use + " DIR",
		Short: short,
		Long:  short + ". DIR is created when missing." + exitCodes(),
		Args:  exactArgs(1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return errs.Wrap(errs.Failure, err, "cannot create %s", dir)
			}
			root := cmd.Root()
			// Without the tag the pages carry no generation date, so
			// regenerating them changes nothing unless a command changed.
			var files []string
			walkCommands(root, func(c *cobra.Command) {
				c.DisableAutoGenTag = true
				files = append(files, filepath.Join(dir, name(c)))
			})
			if err := gen(root, dir); err != nil {
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

// walkCommands visits the commands cobra's generators document: c and every
// available, non-help-topic descendant.
func walkCommands(c *cobra.Command, visit func(*cobra.Command)) {
	visit(c)
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		walkCommands(sub, visit)
	}
}
