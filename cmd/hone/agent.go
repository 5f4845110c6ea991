package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/harness"
	"github.com/hone-perf/hone/harness/agent"
	"github.com/hone-perf/hone/internal/errs"
)

func init() { register("agent", newAgentCmd) }

func newAgentCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Drive an external agent harness through an optimization run",
		Long: `Drive an external agent product turn by turn, with hone's six MCP tools as its
only way to read the target and to change it. See ` + "`hone agent run --help`" + `.`,
		Example: `  hone agent run wordfreq --harness claude-code --turns 5
  hone agent transcripts wordfreq`,
	}
	cmd.AddCommand(newAgentRunCmd(f, nil), newAgentTranscriptsCmd(f, nil), newAgentTranscriptCmd(f, nil))
	return cmd
}

type agentRunOptions struct {
	*factory
	out output

	Target         string
	Harness        string
	Command        string
	Model          string
	Turns          int
	TurnTimeout    time.Duration
	StartupTimeout time.Duration
}

func newAgentRunCmd(f *factory, runF func(*agentRunOptions) error) *cobra.Command {
	opts := &agentRunOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "run TARGET --harness claude-code|exec [--command CMD] [--turns N] [--turn-timeout D] [--json]",
		Short: "Run an agent harness on a target with hone's tools injected",
		Long: `Start an agent harness with hone's MCP server (` + "`hone mcp --workspace ROOT`" + `) injected
as its tools, send it a brief (the target, its latest profile's top hotspots, the
ledger so far, the playbook index and the rules: state a hypothesis before
patching, cheapest untried class first, never repeat a judged attempt), then one
message per turn until the agent says it is done or the turns run out.

Harnesses:
  claude-code  runs ` + "`claude -p`" + ` in stream-json mode (--command replaces "claude"),
               allowing only hone's tools (mcp__hone__*) and none of its own
  exec         runs --command with sh -c; the program speaks the JSONL protocol
               of harness/PROTOCOL.md and finds the MCP server in HONE_MCP_COMMAND

An exec program runs in the current directory; Claude Code runs in an empty
scratch directory, so it sees the target only through hone's tools.

Events print one per line as they happen (llm_chunk events only with --json,
where each line is an event object with its turn, a line the harness wrote
to its stderr is {"harness_stderr": LINE}, and the last line is
{"summary": {"turns", "done", "transcript"}}). The transcript is kept in
<git dir>/hone/transcripts/<target>-<time>.jsonl. A harness that fails to
start, crashes, exceeds --turn-timeout, or reports an error (not logged in,
out of quota or rate-limited, a model refusal) ends the run at once, before
another turn is sent, with a one-line error saying which, and exit status 1;
the transcript is kept.`,
		Example: `  hone agent run wordfreq --harness claude-code --turns 5
  hone agent run wordfreq --harness exec --command ./my-agent --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			if opts.Harness == "" {
				return errs.Usagef("--harness is required: one of %s", strings.Join(harness.Names(), ", "))
			}
			if opts.Turns < 1 {
				return errs.Usagef("--turns must be at least 1")
			}
			return nil
		}, agentRunRun),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Harness, "harness", "", "the harness: "+strings.Join(harness.Names(), " or "))
	fl.StringVar(&opts.Command, "command", "", "the harness program `CMD`: for exec a shell command, for claude-code what to run instead of claude")
	fl.IntVar(&opts.Turns, "turns", agent.DefaultTurns, "most turns to run")
	fl.DurationVar(&opts.TurnTimeout, "turn-timeout", harness.DefaultTurnTimeout, "most time one turn may take")
	fl.DurationVar(&opts.StartupTimeout, "startup-timeout", harness.DefaultStartupTimeout, "most time the harness may take to become ready")
	fl.StringVar(&opts.Model, "model", "", "the model to ask the harness for (default: the harness's own)")
	addJSONFlag(cmd, &opts.out, "print events as JSON lines")
	return cmd
}

func agentRunRun(ctx context.Context, opts *agentRunOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	self, err := selfPath()
	if err != nil {
		return err
	}
	out := opts.out.stream()
	cfg := harness.Config{Name: opts.Harness, Model: opts.Model, TurnTimeout: opts.TurnTimeout, StartupTimeout: opts.StartupTimeout, Stderr: out.childStderr("harness_stderr")}
	switch {
	case opts.Command != "" && opts.Harness == "exec":
		cfg.Command = []string{"sh", "-c", opts.Command}
	case opts.Command != "":
		// The adapter appends its own arguments; "$@" passes them on.
		cfg.Command = []string{"sh", "-c", opts.Command + ` "$@"`, "sh"}
	}
	aopts := agent.Options{
		Target: opts.Target, Harness: cfg, Turns: opts.Turns,
		MCPCommand: []string{self, "mcp", "--workspace", ws.Root},
	}
	if opts.Harness == "exec" {
		// The program is the user's own: relative paths in --command
		// mean what they mean at the prompt.
		if aopts.WorkDir, err = os.Getwd(); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot read the current directory")
		}
		if opts.dir != "" {
			aopts.WorkDir = opts.dir
		}
	}
	aopts.OnMessage = func(turn int, msg string) {
		opts.out.text(func(w io.Writer) { fmt.Fprintf(w, "[turn %d] hone: %s\n", turn, firstLine(msg)) })
	}
	aopts.OnEvent = func(turn int, ev harness.Event) {
		out.emit(struct {
			Turn int `json:"turn"`
			harness.Event
		}{turn, ev}, func(w io.Writer) {
			if line := describeEvent(ev); line != "" {
				fmt.Fprintf(w, "[turn %d] %s\n", turn, line)
			}
		})
	}
	res, err := agent.Run(ctx, ws, aopts)
	if err != nil && res != nil && res.Transcript != "" {
		return &errs.Error{Code: errs.CodeOf(err), Msg: err.Error() + "; transcript: " + res.Transcript, Err: err}
	}
	if err != nil {
		return err
	}
	return out.emit(map[string]any{"summary": res}, func(w io.Writer) {
		end := "turns ran out"
		if res.Done {
			end = "the agent is done"
		}
		fmt.Fprintf(w, "agent run: %d turn(s), %s; transcript %s\n", res.Turns, end, res.Transcript)
	})
}

// selfPath is the hone executable the harness should start as its MCP server:
// the one running now, found the way the shell found it, so a wrapper or a
// link named hone keeps working.
func selfPath() (string, error) {
	arg0 := os.Args[0]
	if !strings.Contains(arg0, "/") {
		if p, err := exec.LookPath(arg0); err == nil {
			arg0 = p
		}
	}
	if strings.Contains(arg0, "/") {
		if p, err := filepath.Abs(arg0); err == nil {
			return p, nil
		}
	}
	p, err := os.Executable()
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot find the hone executable to serve the MCP tools")
	}
	return p, nil
}

// describeEvent renders an event as one terminal line; streamed chunks are
// left out, since the complete text follows in text_output.
func describeEvent(ev harness.Event) string {
	switch ev.Type {
	case harness.LLMChunk:
		return ""
	case harness.LLMRequest:
		return "llm_request " + ev.Model
	case harness.LLMResponse:
		return fmt.Sprintf("llm_response %s %s (%d in, %d out tokens)", ev.Model, ev.StopReason, ev.InputTokens, ev.OutputTokens)
	case harness.ToolCall:
		return fmt.Sprintf("tool_call %s %s", ev.Tool, clip(string(ev.Arguments)))
	case harness.ToolResult:
		status := "ok"
		if ev.IsError {
			status = "error"
		}
		return fmt.Sprintf("tool_result %s %s: %s", ev.Tool, status, clip(ev.Result))
	case harness.TextOutput:
		return "text: " + clip(ev.Text)
	case harness.ErrorEvent:
		return "error: " + clip(ev.Message)
	case harness.TurnComplete:
		s := "turn_complete: " + clip(ev.Response)
		if ev.Done {
			s += " (done)"
		}
		return s
	}
	return string(ev.Type)
}

// clip keeps a terminal line readable: one line, at most 200 characters.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return clip(line)
}
