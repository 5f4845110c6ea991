package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/harness"
	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/workspace"
)

// bin holds the fake exec harness the tests run. hone itself (the MCP
// server) is internal/e2e's, where a test calls a tool.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agent-test-")
	if err != nil {
		panic(err)
	}
	bin = dir
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "fakeexec"), "./harness/testdata/fakeexec")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("go build ./harness/testdata/fakeexec: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// newWorkspace makes a git repository from ../testdata/workspace (one shell
// target, "spin", on branch main).
func newWorkspace(t *testing.T) *workspace.Workspace {
	t.Helper()
	testgit.Setenv(t)
	ws, err := workspace.Open(testgit.NewRepoFS(t, os.DirFS("../testdata/workspace")))
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// options runs the fake harness in mode. Its MCP bridge names hone as a
// user's would; only a harness that calls a tool starts it, and such a
// test puts e2e.Hone in its place.
func options(ws *workspace.Workspace, mode string, env ...string) Options {
	return Options{
		Target: "spin",
		Harness: harness.Config{Name: "exec", Command: []string{filepath.Join(bin, "fakeexec")},
			Env: append(env, "FAKE_MODE="+mode), TurnTimeout: time.Minute},
		Turns:      5,
		MCPCommand: []string{"hone", "mcp", "--workspace", ws.Root},
	}
}

// TestTwoTurnRun: a harness that calls hone's tools over MCP reads
// everything and proposes a patch in turn 1, judges it in turn 2, and is done.
func TestTwoTurnRun(t *testing.T) {
	ws := newWorkspace(t)
	diff, err := os.ReadFile("../testdata/spin-gauss.diff")
	if err != nil {
		t.Fatal(err)
	}
	script := []any{
		[]map[string]any{
			{"tool": "read_profile", "args": map[string]any{"target": "spin"}},
			{"tool": "read_ledger", "args": map[string]any{"target": "spin"}},
			{"tool": "read_playbook", "args": map[string]any{"class_number": 5}},
			{"tool": "read_target_source", "args": map[string]any{"target": "spin", "path": "spin.sh"}},
			{"tool": "propose_patch", "args": map[string]any{"target": "spin", "diff": string(diff),
				"hypothesis": "a closed form replaces the loop", "hotspot": "spin.sh", "playbook_class": 5}},
		},
		[]map[string]any{{"tool": "run_verdict", "args": map[string]any{"patch_id": "$patch_id"}}},
	}
	b, _ := json.Marshal(script)
	scriptFile := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(scriptFile, b, 0o644)

	opts := options(ws, "script", "FAKE_SCRIPT="+scriptFile)
	// The test build of hone: its verdict is measured by declared work and
	// waits for no turn of the machine, where a release build's waited for
	// whatever else measured on it and could outlast the turn's minute.
	// (It skips under -short: a verdict starts jails.)
	opts.MCPCommand[0] = e2e.Hone(t)
	var messages []string
	results := map[string]harness.Event{}
	opts.OnMessage = func(_ int, msg string) { messages = append(messages, msg) }
	opts.OnEvent = func(_ int, ev harness.Event) {
		if ev.Type == harness.ToolResult {
			results[ev.Tool] = ev
		}
	}
	res, err := Run(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 2 || !res.Done {
		t.Fatalf("run: %+v; want 2 turns, done", res)
	}
	if len(messages) != 2 || !strings.Contains(messages[0], "Rules:") || !strings.Contains(messages[1], "Turn 2 of 5") {
		t.Errorf("messages: %q", messages)
	}
	if !results["read_profile"].IsError || !strings.Contains(results["read_profile"].Result, "no profile yet") {
		t.Errorf("read_profile: %+v", results["read_profile"])
	}
	for _, tool := range []string{"read_ledger", "read_playbook", "read_target_source", "propose_patch", "run_verdict"} {
		if r, ok := results[tool]; !ok || r.IsError {
			t.Errorf("%s: %+v", tool, r)
		}
	}
	l := ledger.Open(ws)
	for _, kind := range []ledger.Kind{ledger.KindProposal, ledger.KindVerdict} {
		es, err := l.List(context.Background(), ledger.Filter{Target: "spin", Kind: kind})
		if err != nil || len(es) != 1 {
			t.Errorf("%s entries: %d (%v); want 1", kind, len(es), err)
		}
	}
	lines, err := ReadTranscript(ws, strings.TrimSuffix(filepath.Base(res.Transcript), ".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines[0].Run == nil || lines[0].Run.Harness != "exec" || lines[1].Message != messages[0] {
		t.Errorf("transcript starts %+v %+v", lines[0], lines[1])
	}
	if last := lines[len(lines)-1]; last.Turn != 2 || last.Event == nil || last.Event.Type != harness.TurnComplete || !last.Event.Done {
		t.Errorf("transcript ends %+v", last)
	}
	if !strings.HasPrefix(res.Transcript, filepath.Join(ws.CommonDir, "hone", "transcripts")+"/spin-") {
		t.Errorf("transcript at %s", res.Transcript)
	}
}

func TestRunEndsOnFailure(t *testing.T) {
	ws := newWorkspace(t)
	// Each timeout is short only where it is what ends the run (a harness
	// that hangs, or never says ready); elsewhere it is a minute, so that a
	// start or a turn slowed by a busy machine cannot time out first.
	for _, tc := range []struct {
		mode             string
		startup, timeout time.Duration
		kind             error
		want             string
	}{
		{"crash", time.Minute, time.Minute, harness.ErrExited, "agent run: turn 1 of 5: exec: harness exited during the turn"},
		{"hang", time.Minute, 300 * time.Millisecond, harness.ErrTurnTimeout, "agent run: turn 1 of 5: exec: harness turn timed out"},
		{"never-ready", 300 * time.Millisecond, 0, harness.ErrStartup, "agent run: exec: harness failed to start"},
		{"fatal", time.Minute, time.Minute, harness.ErrReported, "agent run: turn 1 of 5: exec: harness reported an error: Not logged in"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			opts := options(ws, tc.mode)
			opts.Harness.TurnTimeout = tc.timeout
			opts.Harness.StartupTimeout = tc.startup
			res, err := Run(context.Background(), ws, opts)
			if !errors.Is(err, tc.kind) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Run: %v; want %q", err, tc.want)
			}
			if res == nil || res.Turns != 0 {
				t.Fatalf("result %+v; want no completed turn", res)
			}
			if _, err := os.Stat(res.Transcript); err != nil {
				t.Errorf("transcript not kept: %v", err)
			}
		})
	}
}

func TestBrief(t *testing.T) {
	ws := newWorkspace(t)
	if _, err := ledger.Open(ws).Append(context.Background(), &profile.Entry{
		Common: ledger.Common{Kind: ledger.KindProfile, Target: "spin"},
		Source: "perf", Event: "cpu-clock", Samples: 1000, ValueType: "cpu/nanoseconds", Isolation: "none", Pprof: "x.pb.gz",
		Hotspots: []profile.Hotspot{
			{Symbol: "main.count", FlatPct: 61.5, CumPct: 80, File: "count.go", Line: 12},
			{Symbol: "main.same", FlatPct: 20, CumPct: 20, File: "count.go", Line: 30, InlinedInto: "main.find"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	b, err := Brief(context.Background(), ws, "spin")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`optimizing the target "spin"`, "directory targets/spin/, pinned at main",
		"61.50% flat  80.00% cum  main.count  count.go:12",
		"20.00% flat  20.00% cum  main.same (inlined into main.find)  count.go:30",
		"Ledger: no earlier attempts", "  1. ", "  7. ",
		"state your hypothesis", "Start where the profile points", "cheapest untried class first", "Never repeat an attempt", harness.DoneMarker,
		// The spin target has no build file a patch may change.
		"[closed on this target: its build command is hone.toml's",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("brief lacks %q:\n%s", want, b)
		}
	}
	// A Makefile the allowlist lets patches change opens build configuration.
	if err := os.WriteFile(filepath.Join(ws.Root, "targets", "spin", "Makefile"), []byte("all:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err = Brief(context.Background(), ws, "spin"); err != nil || strings.Contains(b, "[closed on this target") {
		t.Errorf("with a patchable Makefile the brief still closes class 1 (%v):\n%s", err, b)
	}
	if _, err := Brief(context.Background(), ws, "nope"); err == nil {
		t.Error("Brief of an unknown target succeeded")
	}
}
