package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/profile"
)

func init() { register("profile", newProfileCmd) }

func newProfileCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Profile a target at its pin and read its hotspots",
		Long: `A profile ranks the functions of a target's workload by their share of CPU
time (or of hardware cycles where the machine counts them), with the hottest
source line of each and the counters of ` + "`perf stat`" + `. Profiles are kept in
the ledger with the full pprof beside them; ` + "`hone profile show`" + ` prints the
latest, the view the MCP tool read_profile returns.`,
		Example: `  hone profile run wordfreq
  hone profile show wordfreq --top 10`,
	}
	cmd.AddCommand(newProfileRunCmd(f, nil), newProfileShowCmd(f, nil), newProfileListCmd(f, nil), newProfileDiffCmd(f, nil))
	return cmd
}

type profileRunOptions struct {
	*factory
	out output

	Target  string
	Profile profile.Options
}

func newProfileRunCmd(f *factory, runF func(*profileRunOptions) error) *cobra.Command {
	opts := &profileRunOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "run TARGET [--frequency HZ] [--pprof-out FILE] [--json]",
		Short: "Profile the target's workload and record the profile in the ledger",
		Long: `Build the target at its pin in the jail (reusing the baseline build cache),
run [targets.TARGET.profile] run (default: the bench command) in the jail
under ` + "`perf record`" + ` and convert it to pprof, reading source lines from
the binary's DWARF. perf runs as the jail's unprivileged user: it needs
kernel.perf_event_paranoid at most 2, and then samples user space only. Stacks are unwound with frame pointers; when most of them
stop at the sampled function (code built without frame pointers), the
workload is recorded again with DWARF unwinding, and the profile says which
mode it used and why. [targets.TARGET.profile] call_graph = "fp" or "dwarf"
forces one. The event is the hardware cycles counter where the machine
has one, else the software cpu-clock; the output says which. With
[targets.TARGET.profile] format = "pprof", the command writes its own pprof
file (output = "...", e.g. Go's -cpuprofile) and hone reads it instead.
` + "`perf stat`" + ` counts one more run; counters the machine cannot count are
reported as not supported, never as zero.

The summary (top 50 hotspots, counters, event, samples, pin, binary hash,
environment) and the gzipped pprof are appended to the ledger. --pprof-out
also writes the pprof to FILE, for ` + "`go tool pprof`" + `.`,
		Example: `  hone profile run wordfreq
  hone profile run wordfreq --frequency 999 --pprof-out cpu.pb.gz && go tool pprof -top cpu.pb.gz`,
		Annotations: exits(errs.NotFound, errs.Invalid, errs.Busy),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			if opts.Profile.Frequency < 0 {
				return errs.Usagef("--frequency must be a positive number of Hz")
			}
			return nil
		}, profileRunRun),
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Profile.Frequency, "frequency", 0, "sampling frequency in Hz (default [targets.X.profile] frequency, else 1999)")
	fl.StringVar(&opts.Profile.PprofOut, "pprof-out", "", "also write the gzipped pprof profile to `FILE` (relative to the current directory)")
	addJSONFlag(cmd, &opts.out, "print the profile entry as JSON")
	return cmd
}

func profileRunRun(ctx context.Context, opts *profileRunOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	popts := opts.Profile
	popts.Progress = func(s string) { opts.io.progress("profile %s: %s", opts.Target, s) }
	var left []errs.Warning
	popts.Warnings = func(w errs.Warning) { left = append(left, w) }
	e, err := profile.Run(ctx, ws, opts.Target, popts)
	opts.io.endProgress()
	if err != nil {
		return err
	}
	warnings := append(jailWarnings(ws, false), left...)
	opts.out.warn(warnings...)
	return opts.out.print(struct {
		*profile.Entry
		Warnings []errs.Warning `json:"warnings"`
	}{e, warnings}, func(w io.Writer) error { return profile.WriteText(w, e.Top(20)) })
}

type profileShowOptions struct {
	*factory
	out output

	Target   string
	ID       string // "" is the latest
	Top      int
	PprofOut string
}

func newProfileShowCmd(f *factory, runF func(*profileShowOptions) error) *cobra.Command {
	opts := &profileShowOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "show TARGET [--id ID] [--top N] [--pprof-out FILE] [--json]",
		Short: "Print the latest profile of a target",
		Long: `Print the target's latest profile (or profile ID, or a unique prefix of at
least 4 characters of it; see ` + "`hone profile list`" + `): event, samples, the top N
hotspots (flat and cumulative share, hottest source line) and the perf stat
counters. This is the view the MCP tool read_profile returns. --pprof-out
writes the gzipped pprof stored with the profile to FILE, for
` + "`go tool pprof FILE`" + `.`,
		Example: `  hone profile show wordfreq
  hone profile show wordfreq --top 5 --pprof-out cpu.pb.gz --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			return nil
		}, profileShowRun),
	}
	cmd.Flags().IntVar(&opts.Top, "top", 20, "show this many hotspots (0: all stored, at most 50)")
	cmd.Flags().StringVar(&opts.ID, "id", "", "show the profile with this ledger entry `ID` (or a unique prefix of it) instead of the latest")
	cmd.Flags().StringVar(&opts.PprofOut, "pprof-out", "", "also write the stored gzipped pprof profile to `FILE` (relative to the current directory)")
	addJSONFlag(cmd, &opts.out, "print the profile entry as JSON")
	return cmd
}

func profileShowRun(ctx context.Context, opts *profileShowOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	e, err := profile.Of(ctx, ws, opts.Target, opts.ID)
	if err != nil {
		return err
	}
	if opts.PprofOut != "" {
		if err := profile.WritePprof(ctx, ws, e, opts.PprofOut); err != nil {
			return err
		}
	}
	top := e.Top(opts.Top)
	return opts.out.print(top, func(w io.Writer) error { return profile.WriteText(w, top) })
}

type profileListOptions struct {
	*factory
	out output

	Target string
}

func newProfileListCmd(f *factory, runF func(*profileListOptions) error) *cobra.Command {
	opts := &profileListOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "list TARGET [--json]",
		Short: "List the profiles of a target, oldest first",
		Long: `List every profile of the target in the ledger, oldest first: id, time, pin,
event, samples and the top hotspot. Ids are what ` + "`hone profile diff`" + ` takes.`,
		Example:     `  hone profile list wordfreq`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			return nil
		}, profileListRun),
	}
	addJSONFlag(cmd, &opts.out, "print the entries as a JSON list")
	return cmd
}

func profileListRun(ctx context.Context, opts *profileListOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	es, err := profile.List(ctx, ws, opts.Target)
	if err != nil {
		return err
	}
	return opts.out.print(es, func(w io.Writer) error { return profile.WriteList(w, es) })
}

type profileDiffOptions struct {
	*factory
	out output

	A, B string
}

func newProfileDiffCmd(f *factory, runF func(*profileDiffOptions) error) *cobra.Command {
	opts := &profileDiffOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "diff A B [--json]",
		Short: "Show the hotspots whose share moved between two profiles",
		Long: `Compare profile B with profile A (ledger entry ids, or unique prefixes of at
least 4 characters of them; see ` + "`hone profile list`" + `)
and list the hotspots whose flat or cumulative share moved by at least 0.5
percentage points, biggest flat move first: did the patch move the hotspot?`,
		Example: `  hone profile diff 0194c2d1 0194c3e8
  hone profile diff 0194c2d1 0194c3e8 --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(2),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			return nil
		}, profileDiffRun),
	}
	addJSONFlag(cmd, &opts.out, "print the comparison as JSON")
	return cmd
}

func profileDiffRun(ctx context.Context, opts *profileDiffOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	a, err := profile.Get(ctx, ws, opts.A)
	if err != nil {
		return err
	}
	b, err := profile.Get(ctx, ws, opts.B)
	if err != nil {
		return err
	}
	c := profile.Diff(a, b)
	return opts.out.print(c, func(w io.Writer) error { return profile.WriteDiff(w, c) })
}
