package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/workspace"
)

func init() { register("targets", newTargetsCmd) }

// targetJSON is one target as `hone targets --json` prints it: hone.toml's
// keys with the workspace defaults merged in, plus pin_commit.
type targetJSON struct {
	Name      string      `json:"name"`
	Path      string      `json:"path"`
	Pin       string      `json:"pin"`
	PinCommit string      `json:"pin_commit"`
	Protect   []string    `json:"protect"`
	Build     string      `json:"build"`
	Gates     []gateJSON  `json:"gates"`
	Bench     benchJSON   `json:"bench"`
	Profile   profileJSON `json:"profile"`
}

type profileJSON struct {
	Run       string `json:"run"`
	Format    string `json:"format"`
	Output    string `json:"output"`
	Frequency int    `json:"frequency"`
}

type gateJSON struct {
	Name        string `json:"name"`
	Run         string `json:"run"`
	Timeout     string `json:"timeout"`
	Equivalence bool   `json:"equivalence"`
}

type benchJSON struct {
	Run        string  `json:"run"`
	Metric     string  `json:"metric"`
	Pairs      int     `json:"pairs"`
	MaxPairs   int     `json:"max_pairs"`
	Warmup     int     `json:"warmup"`
	Threshold  float64 `json:"threshold"`
	Confidence float64 `json:"confidence"`
	Seed       int64   `json:"seed"`
	Timeout    string  `json:"timeout"`
}

func newTargetsCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "targets [--json]",
		Short: "List the workspace's targets with their resolved pins",
		Long: `List the targets hone.toml defines: name, path, and pin, both as written and
as the commit it resolves to now. --json adds each target's protect patterns,
build command, gates, and effective bench and profile settings (workspace
defaults merged in).

Every pin is resolved; one that names no commit is a hone.toml error.`,
		Example: `  hone targets
  hone targets --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(0),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			out := make([]targetJSON, 0, len(ws.Config.Targets))
			for _, name := range ws.TargetNames() {
				t := ws.Config.Targets[name]
				pin, err := ws.ResolvePin(t)
				if err != nil {
					return err
				}
				out = append(out, toTargetJSON(t, pin))
			}
			if asJSON {
				return app.printJSON(out)
			}
			tw := tabwriter.NewWriter(app.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPATH\tPIN\tCOMMIT")
			for _, t := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Path, t.Pin, git.Short(t.PinCommit))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON, with every setting of each target")
	return cmd
}

func toTargetJSON(t *workspace.Target, pin string) targetJSON {
	j := targetJSON{Name: t.Name, Path: t.Path, Pin: t.Pin, PinCommit: pin, Protect: t.Protect, Build: t.Build,
		Profile: profileJSON{Run: t.Profile.Run, Format: t.Profile.Format, Output: t.Profile.Output, Frequency: t.Profile.Frequency}}
	if j.Protect == nil {
		j.Protect = []string{}
	}
	j.Gates = make([]gateJSON, 0, len(t.Gates))
	for _, g := range t.Gates {
		j.Gates = append(j.Gates, gateJSON{Name: g.Name, Run: g.Run, Timeout: g.Timeout.String(), Equivalence: g.Equivalence})
	}
	b := t.Bench
	j.Bench = benchJSON{Run: b.Run, Metric: b.Metric, Pairs: b.Pairs, MaxPairs: b.MaxPairs, Warmup: b.Warmup,
		Threshold: b.Threshold, Confidence: b.Confidence, Seed: b.Seed, Timeout: b.Timeout.String()}
	return j
}
