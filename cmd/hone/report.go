package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/report"
)

func init() { register("report", newReportCmd) }

func newReportCmd(app *App) *cobra.Command {
	var (
		htmlFile string
		asJSON   bool
	)
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
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if htmlFile == "" {
				return errs.Usagef("hone report needs --html FILE, the page to write")
			}
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			target := optionalArg(args)
			r, err := report.FromLedger(ctx, ws, target)
			if err != nil {
				return err
			}
			var page bytes.Buffer
			if err := report.Render(&page, r); err != nil {
				return err
			}
			if err := os.WriteFile(htmlFile, page.Bytes(), 0o644); err != nil {
				return errs.Wrap(errs.Failure, err, "cannot write %s", htmlFile)
			}
			if asJSON {
				return app.printJSON(map[string]any{"file": htmlFile, "attempts": len(r.Attempts), "profiles": len(r.Profiles)})
			}
			fmt.Fprintln(app.Out, htmlFile)
			return nil
		}),
	}
	cmd.Flags().StringVar(&htmlFile, "html", "", "write the report to `FILE` (relative to the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {\"file\", \"attempts\", \"profiles\"} as JSON")
	return cmd
}
