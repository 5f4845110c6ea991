package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/verdict"
)

func init() { register("calibrate", command(newCalibrateCmd)) }

// calibrateProgress shows a calibration's progress: drawn in place on a
// terminal, else one line per phase and batch (a calibration runs for
// many minutes, and CI logs and agents' shells are not terminals), never
// with --json. The duration estimate is a line of its own either way.
func calibrateProgress(s *IOStreams, target string) func(verdict.Progress) {
	lines := !s.quiet && !s.ErrTTY
	return func(p verdict.Progress) {
		if p.Phase == "estimate" {
			if !s.quiet {
				s.endProgress()
				fmt.Fprintf(s.ErrOut, "calibrate %s: this will take about %s to %s\n", target, p.EstimateLow.Round(time.Second), p.EstimateHigh.Round(time.Second))
			}
			return
		}
		if lines {
			fmt.Fprintf(s.ErrOut, "calibrate %s: %s\n", target, progressText(p))
			return
		}
		s.progress("calibrate %s: %s", target, progressText(p))
	}
}

type calibrateOptions struct {
	*factory
	out output

	Target    string
	Calibrate verdict.CalibrationOptions
}

func newCalibrateCmd(f *factory, runF func(*calibrateOptions) error) *cobra.Command {
	opts := &calibrateOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "calibrate TARGET [--sessions N] [--inject 0.05] [--inject -0.02] [--metric M] [--max-pairs N] [--json]",
		Short: "Prove the verdict protocol on this machine with A/A and injected-slowdown sessions",
		Long: `Build the target at its pin in the jail, as a verdict does, and run full
bench sessions of it against itself (A/A: any accept is a false accept) and
against itself with an injected
slowdown (a shell busy loop sized to the given fraction of the workload's
median, run on the candidate side only: a "slower" decision is a detection).
Sessions of each kind alternate so machine load hits them alike.

Reports, per kind: accepts, detections, sessions whose CI excluded 1 or whose
p was below alpha ("significant"), mean pairs and seconds per session, and
records a calibration entry in the ledger. hone verdict warns when this host
has no calibration of the target newer than 7 days.

--inject may be repeated (--inject 0.05 --inject 0.02). A negative fraction
slows the baseline instead, which makes the candidate faster by 1+|f|:
--inject -0.02 at a threshold of 0.02 is a speedup exactly at the threshold,
and its accepts are the protocol's false accepts at its boundary (at most
(1-confidence)/2 by design). Each session is a full bench, so this takes
sessions x (1 + injections) benches; an estimate of the time is printed
before the sessions start, and the output ends with a one-line conclusion
(what this machine detects at max_pairs, and what would detect the rest).`,
		Example: `  hone calibrate wordfreq
  hone calibrate wordfreq --sessions 10 --inject 0.05 --inject 0.02 --inject -0.02 --json`,
		Annotations: exits(errs.NotFound, errs.Invalid, errs.Busy),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			if opts.Calibrate.Sessions < 0 || opts.Calibrate.MaxPairs < 0 {
				return errs.Usagef("--sessions and --max-pairs must be positive")
			}
			return nil
		}, calibrateRun),
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Calibrate.Sessions, "sessions", 20, "sessions of each kind")
	fl.Float64SliceVar(&opts.Calibrate.Inject, "inject", []float64{0.05}, "injected slowdown as a `fraction`; negative: a speedup (repeatable)")
	fl.StringVar(&opts.Calibrate.Metric, "metric", "", "deciding `metric`: instructions, cpu-time or wall (default [bench] metric)")
	fl.IntVar(&opts.Calibrate.MaxPairs, "max-pairs", 0, "stop each session after `N` pairs (default [bench] max_pairs)")
	addJSONFlag(cmd, &opts.out, "print the calibration entry as JSON")
	return cmd
}

func calibrateRun(ctx context.Context, opts *calibrateOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	copts := opts.Calibrate
	copts.Progress = calibrateProgress(opts.io, opts.Target)
	var left []errs.Warning
	copts.Warnings = func(w errs.Warning) { left = append(left, w) }
	c, err := verdict.Calibrate(ctx, ws, opts.Target, copts)
	opts.io.endProgress()
	if err != nil {
		return err
	}
	warnings := append(jailWarnings(ws, c.Environment.JailUserCreated), left...)
	opts.out.warn(warnings...)
	return opts.out.print(struct {
		*verdict.CalibrationEntry
		Warnings []errs.Warning `json:"warnings"`
	}{c, warnings}, func(w io.Writer) error { return verdict.WriteCalibrationText(w, c) })
}
