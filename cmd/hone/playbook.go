package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/playbooks"
)

func init() { register("playbook", newPlaybookCmd) }

func newPlaybookCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "playbook [N] [--json]",
		Short: "List the seven optimization playbooks, or print one",
		Long: fmt.Sprintf(`Without N, list the playbook classes, cheapest first: number, name and one
line. With N (1 to %d), print class N as markdown: its preconditions (the
profile signature that suggests it), procedure, verification and known failure
modes, concrete for C, C++, Rust and Go.

A file playbooks/NN-*.md at the workspace's top level (for example
playbooks/03-our-rules.md) replaces built-in class NN; it needs a "# " title and
the four "## " sections. Outside a repository, the built-in playbooks are shown.

--json prints number, name, summary, markdown and source ("builtin" or the
file that replaced it).`, playbooks.Count),
		Example: `  hone playbook
  hone playbook 5`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        rangeArgs(0, 1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			root, err := playbookRoot(app.Dir)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				list, err := playbooks.List(root)
				if err != nil {
					return err
				}
				if asJSON {
					return app.printJSON(list)
				}
				tw := tabwriter.NewWriter(app.Out, 0, 4, 2, ' ', 0)
				for _, p := range list {
					fmt.Fprintf(tw, "%d\t%s\t%s\n", p.Number, p.Name, p.Summary)
				}
				return tw.Flush()
			}
			n, err := strconv.Atoi(args[0])
			if err != nil {
				return errs.Usagef("playbook class must be a number from 1 to %d, not %q", playbooks.Count, args[0])
			}
			p, err := playbooks.Get(root, n)
			if err != nil {
				return err
			}
			if asJSON {
				return app.printJSON(p)
			}
			_, err = fmt.Fprint(app.Out, p.Markdown)
			return err
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// playbookRoot is where workspace playbooks may replace built-in ones: the
// repository's top level, or none outside a repository.
func playbookRoot(dir string) (string, error) {
	repo, err := repo.Open(dir)
	if errs.Is(err, errs.NotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return repo.Root, nil
}
