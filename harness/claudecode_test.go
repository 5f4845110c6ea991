package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeClaude installs testdata/fakeclaude/claude (which replays the recorded
// stream-json turns) as an executable and returns a claude-code adapter
// running it, plus the files where it records its arguments and input.
func fakeClaude(t *testing.T, turns string, cfg Config) (a Adapter, argsFile, inputFile string) {
	t.Helper()
	dir := t.TempDir()
	script, err := os.ReadFile("testdata/fakeclaude/claude")
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "claude")
	if err := os.WriteFile(exe, script, 0o755); err != nil {
		t.Fatal(err)
	}
	argsFile, inputFile = filepath.Join(dir, "args"), filepath.Join(dir, "input")
	cfg.Name = "claude-code"
	cfg.Command = []string{exe}
	cfg.MCPConfigPath = filepath.Join(dir, "mcp.json")
	cfg.Env = append(cfg.Env, "FAKE_CLAUDE_DIR="+turns, "FAKE_CLAUDE_ARGS="+argsFile, "FAKE_CLAUDE_INPUT="+inputFile)
	a, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tools := []Tool{{Name: "read_profile"}, {Name: "propose_patch"}}
	if err := a.InjectTools(tools, Bridge{Name: "hone", Command: []string{"/bin/hone", "mcp", "--workspace", "/src"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return a, argsFile, inputFile
}

func TestClaudeCodeMapping(t *testing.T) {
	abs, _ := filepath.Abs("testdata/fakeclaude")
	a, argsFile, inputFile := fakeClaude(t, abs, Config{Model: "claude-sonnet-4-5"})
	ctx := context.Background()
	if err := a.Start(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	r1, err := SendMessage(ctx, a, "optimize wordfreq")
	if err != nil {
		t.Fatal(err)
	}
	want1 := []Event{
		{Type: LLMRequest, Model: "claude-sonnet-4-5-20250929"},
		{Type: LLMChunk, Text: "Reading the "},
		{Type: LLMChunk, Text: "profile first."},
		{Type: LLMResponse, Model: "claude-sonnet-4-5-20250929", Text: "Reading the profile first.", InputTokens: 1812, OutputTokens: 9},
		{Type: TextOutput, Text: "Reading the profile first."},
		{Type: LLMResponse, Model: "claude-sonnet-4-5-20250929", StopReason: "tool_use", InputTokens: 1812, OutputTokens: 58},
		{Type: ToolCall, Tool: "mcp__hone__read_profile", ToolCallID: "toolu_01Hk", Arguments: json.RawMessage(`{"target":"wordfreq"}`)},
		{Type: ToolResult, Tool: "mcp__hone__read_profile", ToolCallID: "toolu_01Hk", Result: `{"target":"wordfreq","hotspots":[{"symbol":"main.count","flat_pct":61.2}]}`},
		{Type: LLMRequest, Model: "claude-sonnet-4-5-20250929"},
		{Type: LLMResponse, Model: "claude-sonnet-4-5-20250929", Text: "Hypothesis: main.count rehashes on growth; presizing the map removes it.", StopReason: "end_turn", InputTokens: 1990, OutputTokens: 21},
		{Type: TextOutput, Text: "Hypothesis: main.count rehashes on growth; presizing the map removes it."},
		{Type: TurnComplete, Response: "Hypothesis: main.count rehashes on growth; presizing the map removes it."},
	}
	compareEvents(t, "turn 1", r1.Events, want1)

	r2, err := SendMessage(ctx, a, "continue")
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Done {
		t.Error("turn 2 ends with the done marker but Done = false")
	}
	res := r2.Events[2]
	if res.Type != ToolResult || !res.IsError || res.Tool != "mcp__hone__propose_patch" || !strings.HasPrefix(res.Result, "refused") {
		t.Errorf("turn 2 tool result: %+v; want the refusal", res)
	}

	args, _ := os.ReadFile(argsFile)
	argv := strings.Split(strings.TrimSpace(string(args)), "\n")
	for _, want := range [][]string{
		{"-p"}, {"--input-format", "stream-json"}, {"--output-format", "stream-json"}, {"--verbose"}, {"--replay-user-messages"},
		{"--allowedTools", "mcp__hone__read_profile,mcp__hone__propose_patch"},
		{"--model", "claude-sonnet-4-5"}, {"--strict-mcp-config"},
	} {
		if !containsRun(argv, want) {
			t.Errorf("claude argv %q lacks %q", argv, want)
		}
	}
	i := slices.Index(argv, "--mcp-config")
	if i < 0 {
		t.Fatalf("no --mcp-config in %q", argv)
	}
	cfg, err := os.ReadFile(argv[i+1])
	if err != nil {
		t.Fatal(err)
	}
	var mc mcpConfig
	if err := json.Unmarshal(cfg, &mc); err != nil {
		t.Fatal(err)
	}
	if s := mc.MCPServers["hone"]; s.Command != "/bin/hone" || strings.Join(s.Args, " ") != "mcp --workspace /src" {
		t.Errorf("MCP config: %s", cfg)
	}
	input, _ := os.ReadFile(inputFile)
	lines := strings.Split(strings.TrimSpace(string(input)), "\n")
	var first claudeInput
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &first) != nil || first.Message.Content[0].Text != "optimize wordfreq" {
		t.Errorf("stdin lines: %q", lines)
	}
}

// Claude Code 2.1.197 offers an agent 26 built-in tools; hone's old deny list
// left 16 of them (CronCreate, Skill, Workflow, EnterWorktree, SendMessage,
// ...), so the agent could still schedule jobs and run skills. Every built-in
// must be gone, whatever its name: --tools "" removes them all.
func TestClaudeCodeAgentGetsNoBuiltinTools(t *testing.T) {
	abs, _ := filepath.Abs("testdata/fakeclaude")
	a, argsFile, _ := fakeClaude(t, abs, Config{})
	if err := a.Start(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if _, err := SendMessage(context.Background(), a, "optimize wordfreq"); err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(argsFile)
	argv := strings.Split(strings.TrimSpace(string(args)), "\n")
	if !containsRun(argv, []string{"--tools", ""}) {
		t.Errorf("claude argv %q does not remove the built-in tools with --tools \"\"", argv)
	}
	i := slices.Index(argv, "--disallowedTools")
	if i < 0 {
		t.Fatalf("no --disallowedTools in %q", argv)
	}
	denied := strings.Split(argv[i+1], ",")
	for _, tool := range []string{"Bash", "Read", "Write", "Edit", "Skill", "CronCreate", "Workflow", "EnterWorktree", "Task", "WebFetch"} {
		if !slices.Contains(denied, tool) {
			t.Errorf("--disallowedTools %q lacks %s", argv[i+1], tool)
		}
	}
}

func containsRun(argv, run []string) bool {
	for i := range argv {
		if i+len(run) <= len(argv) && slices.Equal(argv[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

func compareEvents(t *testing.T, what string, got, want []Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g := got[i]
		g.Time = time.Time{}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(want[i])
		if string(gb) != string(wb) {
			t.Errorf("%s event %d:\n got %s\nwant %s", what, i, gb, wb)
		}
	}
}

func TestClaudeCodeNoInit(t *testing.T) {
	// A claude that answers without ever sending system/init is not ready:
	// the first turn fails as a startup failure once the startup timeout ends.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "turn1.jsonl"), []byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}`+"\n"), 0o644)
	a, _, _ := fakeClaude(t, dir, Config{StartupTimeout: 300 * time.Millisecond})
	if err := a.Start(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	_, err := SendMessage(context.Background(), a, "hello")
	if !strings.Contains(err.Error(), "startup timeout") {
		t.Fatalf("SendMessage: %v; want a startup failure", err)
	}
}

// writeTurns writes a fake claude's recorded turns into a new directory.
func writeTurns(t *testing.T, turns ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, turn := range turns {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("turn%d.jsonl", i+1)), []byte(turn), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// replay is Claude Code's echo of the message it just read, which marks where
// a turn's own output starts.
const replay = `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"x"}]},"isReplay":true}` + "\n"

// A turn Claude Code reports as failed ends with ErrReported in its words,
// rather than completing and letting hone send the next turn. The first case
// replays what the real Claude Code (2.1.197, from npm, HOME empty, run with
// hone's arguments) wrote for two messages: each turn a synthetic answer and
// a result marked is_error.
func TestClaudeCodeFailedTurnEndsTheRun(t *testing.T) {
	recorded, _ := filepath.Abs("testdata/claude-not-logged-in")
	for _, tc := range []struct {
		name, turns, want string
		events            []Event // checked when set
	}{
		{"not logged in", recorded, "Not logged in · Please run /login (authentication_failed)", []Event{
			{Type: LLMResponse, Model: "<synthetic>", Text: "Not logged in · Please run /login", StopReason: "stop_sequence"},
			{Type: TextOutput, Text: "Not logged in · Please run /login"},
		}},
		{"max turns", writeTurns(t, `{"type":"system","subtype":"init","model":"m"}
`+replay+`{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":10}
`), "error_max_turns", nil},
		{"refusal", writeTurns(t, `{"type":"system","subtype":"init","model":"m"}
`+replay+`{"type":"assistant","message":{"role":"assistant","model":"m","content":[{"type":"text","text":"I can't help with that."}],"stop_reason":"refusal"}}
{"type":"result","subtype":"success","is_error":false,"result":"I can't help with that."}
`), "the model refused: I can't help with that.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _, inputFile := fakeClaude(t, tc.turns, Config{})
			if err := a.Start(context.Background(), t.TempDir()); err != nil {
				t.Fatal(err)
			}
			r, err := SendMessage(context.Background(), a, "optimize spin")
			if want := "claude-code: harness reported an error: " + tc.want; !errors.Is(err, ErrReported) || err.Error() != want {
				t.Fatalf("SendMessage: %v; want ErrReported: %q", err, want)
			}
			if tc.events != nil {
				compareEvents(t, tc.name, r.Events, tc.events)
			}
			if input, _ := os.ReadFile(inputFile); strings.Count(string(input), "\n") != 1 {
				t.Errorf("claude read %q; want the one message", input)
			}
		})
	}
}

// Claude Code goes on writing after a turn's result (an afterthought and a
// second result). The next turn must answer with its own result, and show
// the leftovers as errors.
func TestClaudeCodeOutputAfterResultIsNotTheNextAnswer(t *testing.T) {
	answer := func(text string) string {
		return `{"type":"assistant","message":{"role":"assistant","model":"m","content":[{"type":"text","text":"` + text + `"}],"stop_reason":"end_turn"}}
{"type":"result","subtype":"success","is_error":false,"result":"` + text + `"}
`
	}
	init := `{"type":"system","subtype":"init","model":"m"}` + "\n"
	dir := writeTurns(t, init+replay+answer("first")+answer("late first"), init+replay+answer("second"))
	a, _, _ := fakeClaude(t, dir, Config{})
	ctx := context.Background()
	if err := a.Start(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"first", "second"} {
		r, err := SendMessage(ctx, a, "go")
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != want {
			t.Fatalf("turn answered %q; want %q", r.Text, want)
		}
		if want == "second" {
			if ev := r.Events[0]; ev.Type != ErrorEvent || !strings.HasPrefix(ev.Message, "ignored output of an earlier turn") {
				t.Errorf("turn 2 starts with %+v; want the leftover reported", ev)
			}
		}
	}
}
