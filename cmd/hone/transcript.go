package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/harness/agent"
	"github.com/hone-perf/hone/internal/errs"
)

func newAgentTranscriptsCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "transcripts [TARGET] [--json]",
		Short: "List the transcripts agent runs kept",
		Long: `List the transcripts ` + "`hone agent run`" + ` kept in <git dir>/hone/transcripts/,
oldest first: name, target, harness, start time, messages hone sent, size.
With TARGET, only that target's.`,
		Example: `  hone agent transcripts
  hone agent transcripts wordfreq --json`,
		Args: rangeArgs(0, 1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			target := optionalArg(args)
			list, err := agent.Transcripts(ws, target)
			if err != nil {
				return err
			}
			if asJSON {
				return app.printJSON(list)
			}
			tw := tabwriter.NewWriter(app.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTARGET\tHARNESS\tSTARTED\tTURNS\tBYTES")
			for _, t := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", t.Name, t.Target, t.Harness, t.Started.Format("2006-01-02 15:04:05Z"), t.Turns, t.Bytes)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

func newAgentTranscriptCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "transcript NAME [--json]",
		Short: "Print one agent run's transcript",
		Long: `Print the transcript NAME (as ` + "`hone agent transcripts`" + ` lists it): every message hone
sent and every event the harness reported, turn by turn. With --json, the
transcript's own lines, one JSON object per line.`,
		Example: `  hone agent transcript wordfreq-20261130T214010.123456789Z
  hone agent transcript wordfreq-20261130T214010.123456789Z --json | jq .event.type`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			lines, err := agent.ReadTranscript(ws, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				out := newJSONLines(app.Out)
				for _, l := range lines {
					if err := out.emit(l); err != nil {
						return err
					}
				}
				return nil
			}
			for _, l := range lines {
				switch {
				case l.Run != nil:
					fmt.Fprintf(app.Out, "run: target %s, harness %s, started %s\n", l.Run.Target, l.Run.Harness, l.Run.Started.Format("2006-01-02 15:04:05Z"))
				case l.Message != "":
					fmt.Fprintf(app.Out, "[turn %d] hone: %s\n", l.Turn, l.Message)
				case l.Event != nil:
					if line := describeEvent(*l.Event); line != "" {
						fmt.Fprintf(app.Out, "[turn %d] %s\n", l.Turn, line)
					}
				}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the transcript's lines as JSON")
	return cmd
}
