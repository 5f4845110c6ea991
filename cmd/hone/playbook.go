package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/playbooks"
)

func init() { register("playbook", command(newPlaybookCmd)) }

type playbookOptions struct {
	*factory
	out output

	List  bool // no class given: list them all
	Class int
}

func newPlaybookCmd(f *factory, runF func(*playbookOptions) error) *cobra.Command {
	opts := &playbookOptions{factory: f, out: f.output()}
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
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.List = len(args) == 0
			if len(args) == 1 {
				n, err := strconv.Atoi(args[0])
				if err != nil {
					return errs.Usagef("playbook class must be a number from 1 to %d, not %q", playbooks.Count, args[0])
				}
				opts.Class = n
			}
			return nil
		}, playbookRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func playbookRun(_ context.Context, opts *playbookOptions) error {
	root, err := playbookRoot(opts.dir)
	if err != nil {
		return err
	}
	if opts.List {
		list, err := playbooks.List(root)
		if err != nil {
			return err
		}
		return opts.out.print(list, func(w io.Writer) error {
			rows := make([][]string, 0, len(list))
			for _, p := range list {
				rows = append(rows, []string{strconv.Itoa(p.Number), p.Name, p.Summary})
			}
			return writeColumns(w, rows)
		})
	}
	p, err := playbooks.Get(root, opts.Class)
	if err != nil {
		return err
	}
	return opts.out.print(p, func(w io.Writer) error {
		_, err := fmt.Fprint(w, p.Markdown)
		return err
	})
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
