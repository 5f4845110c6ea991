package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/workspace"
)

func init() { register("targets", command(newTargetsCmd)) }

// targetJSON is one target as `hone targets --json` prints it: hone.toml's
// keys with the workspace defaults merged in (the config types carry the
// JSON names, so a new key cannot go missing here), plus pin_commit.
type targetJSON struct {
	*workspace.Target
	PinCommit string `json:"pin_commit"`
}

type targetsOptions struct {
	*factory
	out output
}

func newTargetsCmd(f *factory, runF func(*targetsOptions) error) *cobra.Command {
	opts := &targetsOptions{factory: f, out: f.output()}
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
		RunE:        runCommand(opts, runF, nil, targetsRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON, with every setting of each target")
	return cmd
}

func targetsRun(ctx context.Context, opts *targetsOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	ts := make([]targetJSON, 0, len(ws.Config.Targets))
	for _, name := range ws.TargetNames() {
		t := ws.Config.Targets[name]
		pin, err := ws.ResolvePin(ctx, t)
		if err != nil {
			return err
		}
		ts = append(ts, targetJSON{Target: t, PinCommit: pin})
	}
	return opts.out.print(ts, func(w io.Writer) error { return writeTargets(w, ts) })
}

func writeTargets(w io.Writer, ts []targetJSON) error {
	rows := [][]string{{"NAME", "PATH", "PIN", "COMMIT"}}
	for _, t := range ts {
		rows = append(rows, []string{t.Name, t.Path, t.Pin, git.Short(t.PinCommit)})
	}
	return writeColumns(w, rows)
}
