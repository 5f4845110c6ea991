package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/harness/agent"
	"github.com/hone-perf/hone/internal/errs"
)

type agentTranscriptsOptions struct {
	*factory
	out output

	Target string // "" lists every target's
}

func newAgentTranscriptsCmd(f *factory, runF func(*agentTranscriptsOptions) error) *cobra.Command {
	opts := &agentTranscriptsOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "transcripts [TARGET] [--json]",
		Short: "List the transcripts agent runs kept",
		Long: `List the transcripts ` + "`hone agent run`" + ` kept in <git dir>/hone/transcripts/,
oldest first: name, target, harness, start time, messages hone sent, size.
With TARGET, only that target's.`,
		Example: `  hone agent transcripts
  hone agent transcripts wordfreq --json`,
		Args: rangeArgs(0, 1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = optionalArg(args)
			return nil
		}, agentTranscriptsRun),
	}
	addJSONFlag(cmd, &opts.out, "print the list as JSON")
	return cmd
}

func agentTranscriptsRun(_ context.Context, opts *agentTranscriptsOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	list, err := agent.Transcripts(ws, opts.Target)
	if err != nil {
		return err
	}
	return opts.out.print(list, func(w io.Writer) error {
		rows := [][]string{{"NAME", "TARGET", "HARNESS", "STARTED", "TURNS", "BYTES"}}
		for _, t := range list {
			rows = append(rows, []string{t.Name, t.Target, t.Harness, t.Started.Format("2006-01-02 15:04:05Z"), strconv.Itoa(t.Turns), strconv.FormatInt(t.Bytes, 10)})
		}
		return writeColumns(w, rows)
	})
}

type agentTranscriptOptions struct {
	*factory
	out output

	Name string
}

func newAgentTranscriptCmd(f *factory, runF func(*agentTranscriptOptions) error) *cobra.Command {
	opts := &agentTranscriptOptions{factory: f, out: f.output()}
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
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			return nil
		}, agentTranscriptRun),
	}
	addJSONFlag(cmd, &opts.out, "print the transcript's lines as JSON")
	return cmd
}

func agentTranscriptRun(_ context.Context, opts *agentTranscriptOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	lines, err := agent.ReadTranscript(ws, opts.Name)
	if err != nil {
		return err
	}
	out := opts.out.stream()
	for _, l := range lines {
		if err := out.emit(l, func(w io.Writer) { writeTranscriptLine(w, l) }); err != nil {
			return err
		}
	}
	return nil
}

func writeTranscriptLine(w io.Writer, l agent.Line) {
	switch {
	case l.Run != nil:
		fmt.Fprintf(w, "run: target %s, harness %s, started %s\n", l.Run.Target, l.Run.Harness, l.Run.Started.Format("2006-01-02 15:04:05Z"))
	case l.Message != "":
		fmt.Fprintf(w, "[turn %d] hone: %s\n", l.Turn, l.Message)
	case l.Event != nil:
		if line := describeEvent(*l.Event); line != "" {
			fmt.Fprintf(w, "[turn %d] %s\n", l.Turn, line)
		}
	}
}
