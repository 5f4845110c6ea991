package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/report"
)

func init() { register("report", command(newReportCmd)) }

type reportOptions struct {
	*factory
	out output

	Target string // "" reports every target
	HTML   string // the page to write
}

func newReportCmd(f *factory, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "report [TARGET] --html FILE",
		Short: "Write the ledger and the latest profile as one HTML page",
		Long: `Write one self-contained HTML file: the ledger's attempts as a table (class,
hotspot, hypothesis, verdict, speedup and its confidence interval), a forest
plot of the speedup intervals against the accept threshold, and the latest
profile's hotspots as a bar chart. Without TARGET, every target is reported.

The page loads nothing from anywhere (inline styles and SVG), so it can be
archived or attached to a CI run as is. It prints the file's path.`,
		Example: `  hone report --html report.html
  hone report wordfreq --html /tmp/wordfreq.html --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        rangeArgs(0, 1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			if opts.HTML == "" {
				return errs.Usagef("hone report needs --html FILE, the page to write")
			}
			opts.Target = optionalArg(args)
			return nil
		}, reportRun),
	}
	cmd.Flags().StringVar(&opts.HTML, "html", "", "write the report to `FILE` (relative to the current directory)")
	addJSONFlag(cmd, &opts.out, "print {\"file\", \"attempts\", \"profiles\"} as JSON")
	return cmd
}

func reportRun(ctx context.Context, opts *reportOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	r, err := report.FromLedger(ctx, ws, opts.Target)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := report.Render(&page, r); err != nil {
		return err
	}
	if err := os.WriteFile(opts.HTML, page.Bytes(), 0o644); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", opts.HTML)
	}
	return opts.out.print(map[string]any{"file": opts.HTML, "attempts": len(r.Attempts), "profiles": len(r.Profiles)}, func(w io.Writer) error {
		_, err := fmt.Fprintln(w, opts.HTML)
		return err
	})
}
