package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
)

// ProtocolVersion is the version of the exec protocol (PROTOCOL.md) hone speaks.
const ProtocolVersion = "1"

// execAdapter runs any program speaking the JSONL protocol of PROTOCOL.md.
type execAdapter struct {
	procAdapter
	turns int // messages sent so far; the current turn's number
}

func newExec(cfg Config) *execAdapter { return &execAdapter{procAdapter: newProcAdapter("exec", cfg)} }

func (a *execAdapter) Builtins() []string { return a.cfg.Builtins }

func (a *execAdapter) InjectTools(tools []Tool, bridge Bridge) error {
	return a.inject(a.Builtins(), tools, bridge)
}

// protocolEnv is what the program learns at startup: the protocol version,
// the tools it may offer its model, and how to reach the MCP server.
func (a *execAdapter) protocolEnv(configPath string) ([]string, error) {
	tools, err := json.Marshal(a.tools)
	if err != nil {
		return nil, err
	}
	env := []string{"HONE_PROTOCOL=" + ProtocolVersion, "HONE_TOOLS=" + string(tools), "HONE_MCP_CONFIG=" + configPath}
	if len(a.bridge.Command) > 0 {
		argv, err := json.Marshal(a.bridge.Command)
		if err != nil {
			return nil, err
		}
		env = append(env, "HONE_MCP_COMMAND="+string(argv))
	}
	if a.bridge.URL != "" {
		env = append(env, "HONE_MCP_URL="+a.bridge.URL)
	}
	if a.cfg.Model != "" {
		env = append(env, "HONE_MODEL="+a.cfg.Model)
	}
	return env, nil
}

func (a *execAdapter) Start(ctx context.Context, workdir string) (err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	workdir, path, err := a.prepare(workdir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			a.abandon()
		}
	}()
	env, err := a.protocolEnv(path)
	if err != nil {
		return &Error{Kind: ErrStartup, Harness: a.Name(), Err: err}
	}
	p, err := StartProcess(a.cfg.Command, workdir, append(env, a.cfg.Env...), a.cfg.Stderr)
	if err != nil {
		return &Error{Kind: ErrStartup, Harness: a.Name(), Detail: "cannot run " + strings.Join(a.cfg.Command, " "), Err: err}
	}
	a.proc = p
	if err := a.awaitReady(ctx); err != nil {
		p.Stop(context.WithoutCancel(ctx), a.cfg.StopGrace)
		return err
	}
	return nil
}

// awaitReady waits for the program's {"type":"ready"} line.
func (a *execAdapter) awaitReady(ctx context.Context) error {
	fail := func(detail string, cause error) error {
		return &Error{Kind: ErrStartup, Harness: a.Name(), Detail: detail, Stderr: a.proc.Stderr(), Err: cause}
	}
	timer := time.NewTimer(a.cfg.StartupTimeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-a.proc.Lines():
			if !ok {
				<-a.proc.Done()
				return fail("it exited before saying ready ("+exitStatus(a.proc)+")", nil)
			}
			var m struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(line, &m) == nil && m.Type == "ready" {
				return nil
			}
			return fail(fmt.Sprintf("its first line must be {\"type\":\"ready\"}, got %.200s", line), nil)
		case <-timer.C:
			return fail(fmt.Sprintf("no ready line within the startup timeout of %s", a.cfg.StartupTimeout), nil)
		case <-ctx.Done():
			return fail("cancelled", ctx.Err())
		}
	}
}

func (a *execAdapter) SendMessageStreaming(ctx context.Context, msg string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		p, err := a.running()
		if err != nil {
			yield(Event{}, err)
			return
		}
		a.turns++
		line, err := json.Marshal(execMessage{Type: "message", Text: msg, Turn: a.turns})
		if err != nil {
			yield(Event{}, err)
			return
		}
		n := a.turns
		parse := func(line []byte) ([]Event, error) { return parseExecLine(line, n) }
		t := &turn{name: a.Name(), proc: p, timeout: a.cfg.TurnTimeout, parse: parse}
		t.run(ctx, append(line, '\n'), yield)
	}
}

// execMessage is what hone writes on the program's stdin, one per turn.
type execMessage struct {
	Type string `json:"type"`
	Text string `json:"text"`
	Turn int    `json:"turn"`
}

// execEvent is an event line: an Event, the turn it answers (echoed from the
// message; 0 when the program does not say), and for an error, whether the
// program cannot go on.
type execEvent struct {
	Event
	Turn  int  `json:"turn"`
	Fatal bool `json:"fatal"`
}

// parseExecLine reads one event line during turn n. A line that is not a JSON
// event does not end the turn (a program may print a stray line), nor does an
// event that names an earlier turn; each becomes an error event so the
// transcript shows it. A fatal error event ends the turn with ErrReported.
func parseExecLine(line []byte, n int) ([]Event, error) {
	var ev execEvent
	if err := json.Unmarshal(line, &ev); err != nil || !ev.Type.Known() {
		return []Event{{Type: ErrorEvent, Message: fmt.Sprintf("not a protocol event: %.200s", line)}}, nil
	}
	if ev.Turn != 0 && ev.Turn != n {
		return []Event{earlierOutput(line)}, nil
	}
	if ev.Type == ErrorEvent && ev.Fatal {
		if ev.Message == "" {
			return nil, errors.New("a fatal error event without a message")
		}
		return nil, errors.New(ev.Message)
	}
	return []Event{ev.Event}, nil
}
