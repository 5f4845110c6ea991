// Package agent drives an external agent harness through a whole
// optimization run: it injects hone's MCP tools, sends a brief built from the
// target's profile, ledger and playbooks, then one message per turn until the
// agent says it is done or the turns run out, keeping a transcript in git's
// directory.
package agent

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/hone-perf/hone/harness"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/mcp"
	"github.com/hone-perf/hone/workspace"
)

// DefaultTurns is how many turns a run has when Options.Turns is zero.
const DefaultTurns = 10

// Options configure one run.
type Options struct {
	Target  string
	Harness harness.Config
	Turns   int
	// WorkDir is where the harness runs; "" means a fresh empty directory,
	// removed afterwards, so the harness sees the target only through
	// read_target_source.
	WorkDir string
	// MCPCommand is the argv that serves hone's tools for this workspace,
	// normally `hone mcp --workspace ROOT`.
	MCPCommand []string
	// OnMessage and OnEvent see the run as it happens, for display.
	OnMessage func(turn int, msg string)
	OnEvent   func(turn int, ev harness.Event)

	// openTranscript replaces where the transcript goes, for tests.
	openTranscript func(ws *workspace.Workspace, target string) (*transcript, error)
}

// Result says how a run ended.
type Result struct {
	Turns      int    `json:"turns"`      // turns completed
	Done       bool   `json:"done"`       // the agent said it had nothing left to try
	Transcript string `json:"transcript"` // path of the JSONL transcript
}

// Line is one line of a transcript: a header, a message hone sent, or an
// event the harness reported.
type Line struct {
	Turn    int            `json:"turn"`
	Run     *Header        `json:"run,omitempty"`
	Message string         `json:"message,omitempty"`
	Event   *harness.Event `json:"event,omitempty"`
}

// Header opens a transcript.
type Header struct {
	Target  string    `json:"target"`
	Harness string    `json:"harness"`
	Command []string  `json:"command,omitempty"`
	Started time.Time `json:"started"`
}

// Run drives one agent run. A harness that fails to start, crashes, exceeds
// a turn's time, or reports that it cannot go on (not logged in, out of
// quota, a refusal) ends the run at once with an error naming which; no
// further turn is sent, and the transcript up to that point is kept.
func Run(ctx context.Context, ws *workspace.Workspace, opts Options) (res *Result, err error) {
	if opts.Turns <= 0 {
		opts.Turns = DefaultTurns
	}
	brief, err := Brief(ctx, ws, opts.Target)
	if err != nil {
		return nil, err
	}
	a, err := harness.New(opts.Harness)
	if err != nil {
		return nil, err
	}
	defs, err := mcp.Tools(ctx)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list hone's MCP tools")
	}
	tools := make([]harness.Tool, 0, len(defs))
	for _, d := range defs {
		schema, _ := json.Marshal(d.InputSchema)
		tools = append(tools, harness.Tool{Name: d.Name, Description: d.Description, InputSchema: schema})
	}
	if err := a.InjectTools(tools, harness.Bridge{Name: mcp.ServerName, Command: opts.MCPCommand}); err != nil {
		return nil, err
	}

	open := opts.openTranscript
	if open == nil {
		open = openTranscript
	}
	tr, err := open(ws, opts.Target)
	if err != nil {
		return nil, err
	}
	res = &Result{Transcript: tr.path}
	defer func() {
		if cerr := tr.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := tr.write(Line{Run: &Header{Target: opts.Target, Harness: a.Name(), Command: opts.Harness.Command, Started: time.Now().UTC()}}); err != nil {
		return res, err
	}

	workdir := opts.WorkDir
	if workdir == "" {
		if workdir, err = os.MkdirTemp("", "hone-agent-"); err != nil {
			return res, errs.Wrap(errs.Failure, err, "cannot create the harness's working directory")
		}
		defer os.RemoveAll(workdir)
	}
	if err := a.Start(ctx, workdir); err != nil {
		return res, errs.Wrap(errs.Failure, err, "agent run")
	}
	defer a.Stop(context.WithoutCancel(ctx))

	msg := brief
	for turn := 1; turn <= opts.Turns; turn++ {
		if turn > 1 {
			if msg, err = FollowUp(ctx, ws, opts.Target, turn, opts.Turns); err != nil {
				return res, err
			}
		}
		if err := tr.write(Line{Turn: turn, Message: msg}); err != nil {
			return res, err
		}
		if opts.OnMessage != nil {
			opts.OnMessage(turn, msg)
		}
		done := false
		for ev, err := range a.SendMessageStreaming(ctx, msg) {
			if err != nil {
				if werr := tr.write(Line{Turn: turn, Event: &harness.Event{Type: harness.ErrorEvent, Time: time.Now().UTC(), Message: err.Error()}}); werr != nil {
					return res, werr
				}
				return res, errs.Wrap(errs.Failure, err, "agent run: turn %d of %d", turn, opts.Turns)
			}
			if err := tr.write(Line{Turn: turn, Event: &ev}); err != nil {
				return res, err
			}
			if opts.OnEvent != nil {
				opts.OnEvent(turn, ev)
			}
			if ev.Type == harness.TurnComplete {
				done = ev.Done
			}
		}
		res.Turns = turn
		if done {
			res.Done = true
			break
		}
	}
	return res, nil
}
