package harness

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync/atomic"
)

// DoneMarker is the line an agent ends its reply with when it has nothing left
// to try. Claude Code has no way to say "done" in its stream, so hone's brief
// asks for this marker and the adapter turns it into turn_complete's Done.
const DoneMarker = "[hone:done]"

// claudeBuiltins are Claude Code's own tools, as Claude Code 2.1.197 lists
// them (plus the older names it still knows). The agent gets none of them:
// `--tools ""` removes every built-in, whatever this version calls them, and
// the list is also passed as --disallowedTools in case a built-in escapes
// --tools. Names Claude Code does not know make it print a warning, so the
// list holds none.
var claudeBuiltins = []string{
	"Agent", "Bash", "BashOutput", "CronCreate", "CronDelete", "CronList", "DesignSync",
	"Edit", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "KillShell",
	"NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill",
	"Task", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate",
	"TodoWrite", "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write",
}

// claudeCode drives `claude -p` in stream-json mode: one user message per
// line on stdin, and its event stream on stdout, where a `result` event ends
// the turn.
type claudeCode struct {
	procAdapter
	// inited is set by the system/init event. Claude Code only emits it after
	// reading the first message, so readiness is checked inside the first turn.
	inited atomic.Bool
	// toolNames maps tool_use ids to tool names, so tool results can name them.
	toolNames map[string]string
	// sent counts the messages hone wrote and replays their echoes: output
	// read while 0 < replays < sent is left over from an earlier turn.
	sent, replays int
	// apiError and refused describe the current turn's failure, for the
	// result that ends it.
	apiError string
	refused  bool
}

func newClaudeCode(cfg Config) *claudeCode {
	if len(cfg.Command) == 0 {
		cfg.Command = []string{"claude"}
	}
	return &claudeCode{procAdapter: newProcAdapter("claude-code", cfg), toolNames: map[string]string{}}
}

func (a *claudeCode) Builtins() []string {
	if a.cfg.Builtins != nil {
		return a.cfg.Builtins
	}
	return claudeBuiltins
}

func (a *claudeCode) InjectTools(tools []Tool, bridge Bridge) error {
	return a.inject(a.Builtins(), tools, bridge)
}

// allowedTools are the names Claude Code gives MCP tools: mcp__<server>__<tool>.
func (a *claudeCode) allowedTools() []string {
	var names []string
	for _, t := range a.tools {
		names = append(names, "mcp__"+a.bridge.Name+"__"+t.ServerName)
	}
	return names
}

func (a *claudeCode) args(configPath string) []string {
	argv := append([]string(nil), a.cfg.Command...)
	argv = append(argv, "-p",
		"--input-format", "stream-json", "--output-format", "stream-json",
		"--verbose", "--include-partial-messages", "--replay-user-messages",
		"--mcp-config", configPath, "--strict-mcp-config",
		"--tools", "",
		"--disallowedTools", strings.Join(a.Builtins(), ","))
	if len(a.tools) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(a.allowedTools(), ","))
	}
	if a.cfg.Model != "" {
		argv = append(argv, "--model", a.cfg.Model)
	}
	return argv
}

func (a *claudeCode) Start(ctx context.Context, workdir string) (err error) {
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
	p, err := StartProcess(a.args(path), workdir, a.cfg.Env, a.cfg.Stderr)
	if err != nil {
		return &Error{Kind: ErrStartup, Harness: a.Name(), Detail: "cannot run " + a.cfg.Command[0] + " (is Claude Code installed and on PATH?)", Err: err}
	}
	a.proc = p
	return nil
}

func (a *claudeCode) SendMessageStreaming(ctx context.Context, msg string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		p, err := a.running()
		if err != nil {
			yield(Event{}, err)
			return
		}
		in := claudeInput{Type: "user", Message: claudeMessage{Role: "user", Content: []claudeBlock{{Type: "text", Text: msg}}}}
		line, err := json.Marshal(in)
		if err != nil {
			yield(Event{}, err)
			return
		}
		a.sent++
		t := &turn{name: a.Name(), proc: p, timeout: a.cfg.TurnTimeout, parse: a.parse,
			startup: a.cfg.StartupTimeout, ready: a.inited.Load}
		t.run(ctx, append(line, '\n'), yield)
	}
}
