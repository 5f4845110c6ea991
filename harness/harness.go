// Package harness drives external agent harnesses (Claude Code, or any program
// speaking the JSONL protocol of PROTOCOL.md) turn by turn. A harness is a
// long-lived process that keeps its conversation across turns; each turn sends
// one user message and streams events until the harness reports turn_complete.
//
// hone's six tools reach the harness through an MCP server (`hone mcp`), which
// the adapter injects into the harness's configuration before starting it.
package harness

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// Adapter owns one harness process and speaks its wire format. Call
// InjectTools, then Start, then SendMessageStreaming once per turn, and Stop
// when done. Adapters are not safe for concurrent turns.
type Adapter interface {
	// Name is the adapter's name as given to `hone agent run --harness`.
	Name() string
	// Builtins are the harness's own tool names; injected tools must not shadow
	// them (see ResolveTools).
	Builtins() []string
	// InjectTools records the tools and the MCP server that serves them, so the
	// harness discovers them at startup. It must be called before Start.
	// Tools without a bridge are refused; with neither, the harness is given
	// no MCP server at all.
	InjectTools(tools []Tool, bridge Bridge) error
	// Start launches the harness in workdir and waits until it is ready, within
	// the configured startup timeout. A failure is an ErrStartup *Error.
	Start(ctx context.Context, workdir string) error
	// SendMessageStreaming sends one user message and yields the turn's events.
	// A complete turn ends with a TurnComplete event; a turn that fails yields
	// a non-nil error as its last element: an *Error (ErrTurnTimeout,
	// ErrExited, ErrNotRunning, ErrProtocol, ErrReported, or ErrStartup when
	// the harness only proves ready inside its first turn), or ctx.Err() when
	// ctx ends. The events are the turn's own: output the harness wrote after
	// an earlier turn ended is yielded as an error event, never as this
	// turn's answer.
	// Breaking out of the loop early abandons the turn; the harness is then in
	// an unknown state and should be stopped.
	SendMessageStreaming(ctx context.Context, msg string) iter.Seq2[Event, error]
	// IsAlive reports whether the harness process is running.
	IsAlive() bool
	// Stop ends the harness: it closes its input, then sends SIGTERM to its
	// process group and SIGKILL after a grace period. It is idempotent and
	// succeeds on an adapter that never started.
	Stop(ctx context.Context) error
}

// Tool is an environment tool offered to the harness.
type Tool struct {
	// Name is what the harness calls the tool: the server's name, or
	// env_<name> when that collides with a harness built-in.
	Name string `json:"name"`
	// ServerName is the tool's name on the MCP server.
	ServerName  string          `json:"server_name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Bridge is the MCP server that serves the injected tools. hone's server is a
// stdio command (`hone mcp --workspace DIR`); URL is for a server reached over
// HTTP instead. The seed's bridge_url generalises to this because a stdio
// server has no URL.
type Bridge struct {
	Name    string   `json:"name"`              // server name the harness shows; "" means DefaultBridgeName
	Command []string `json:"command,omitempty"` // argv of a stdio server
	URL     string   `json:"url,omitempty"`
}

// Response is one turn, drained.
type Response struct {
	Text   string  // the turn_complete response
	Done   bool    // the harness says it has nothing more to do
	Events []Event // every event of the turn, turn_complete last
}

// SendMessage runs one turn to completion and returns its response. It fails
// when the turn fails or when the stream ends without turn_complete.
func SendMessage(ctx context.Context, a Adapter, msg string) (*Response, error) {
	var events []Event
	for ev, err := range a.SendMessageStreaming(ctx, msg) {
		if err != nil {
			return &Response{Events: events}, err
		}
		events = append(events, ev)
	}
	if len(events) == 0 || events[len(events)-1].Type != TurnComplete {
		return &Response{Events: events}, &Error{Kind: ErrProtocol, Harness: a.Name(), Detail: "the event stream ended without turn_complete"}
	}
	last := events[len(events)-1]
	return &Response{Text: last.Response, Done: last.Done, Events: events}, nil
}

// Names lists the adapters New knows.
func Names() []string { return []string{"claude-code", "exec"} }

// New returns the adapter named by cfg.Name.
func New(cfg Config) (Adapter, error) {
	cfg = cfg.withDefaults()
	switch cfg.Name {
	case "claude-code":
		return newClaudeCode(cfg), nil
	case "exec":
		if len(cfg.Command) == 0 {
			return nil, errs.Usagef("harness exec needs a program to run; pass --command CMD")
		}
		return newExec(cfg), nil
	}
	return nil, errs.Usagef("unknown harness %q; known harnesses: %s", cfg.Name, strings.Join(Names(), ", "))
}
