package mcp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/playbooks"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/source"
	"github.com/hone-perf/hone/workspace"
)

func TestToolsList(t *testing.T) {
	cs := connect(t, newWorkspace(t), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil {
			t.Errorf("%s lacks a description or an output schema", tool.Name)
		}
		props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		for arg, s := range props {
			if d, _ := s.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s(%s) has no description", tool.Name, arg)
			}
		}
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(ToolNames))
	if !slices.Equal(names, want) {
		t.Fatalf("tools %q; want exactly %q", names, want)
	}
}

func TestReadTools(t *testing.T) {
	dir := newWorkspace(t)
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, dir, nil)

	res := call(t, cs, "read_profile", map[string]any{"target": "spin"})
	if !res.IsError || !strings.Contains(text(res), "has no profile yet") {
		t.Errorf("read_profile without a profile: %s", text(res))
	}
	// The read tools write nothing: every ref is the same after them.
	defer func(before string) {
		if after := refs(t, dir); after != before {
			t.Errorf("refs changed by read tools:\nbefore:\n%safter:\n%s", before, after)
		}
	}(refsAfterProfile(t, ws, dir))
	m := ok(t, "read_profile", call(t, cs, "read_profile", map[string]any{"target": "spin"}))
	if hs, _ := m["hotspots"].([]any); len(hs) != 1 || hs[0].(map[string]any)["symbol"] != "main.count" {
		t.Errorf("read_profile hotspots: %v", m["hotspots"])
	}

	m = ok(t, "read_playbook", call(t, cs, "read_playbook", map[string]any{"class_number": 3}))
	want, _ := playbooks.Get(dir, 3)
	if m["markdown"] != want.Markdown || m["number"] != 3.0 {
		t.Errorf("read_playbook 3: number %v, markdown differs from playbooks.Get", m["number"])
	}
	res = call(t, cs, "read_playbook", map[string]any{"class_number": 9})
	_, perr := playbooks.Get(dir, 9)
	if !res.IsError || text(res) != perr.Error() {
		t.Errorf("read_playbook 9: %q; want the CLI's message %q", text(res), perr)
	}

	m = ok(t, "read_target_source", call(t, cs, "read_target_source", map[string]any{"target": "spin", "path": "spin.sh", "offset": 2, "limit": 2}))
	lines, _ := m["lines"].([]any)
	if len(lines) != 2 || lines[0].(map[string]any)["text"] != "n=3000" || m["truncated"] != true {
		t.Errorf("read_target_source spin.sh lines 2-3: %v", m)
	}
	m = ok(t, "read_target_source", call(t, cs, "read_target_source", map[string]any{"target": "spin", "path": ""}))
	if m["type"] != "dir" {
		t.Errorf("read_target_source of the root: %v", m)
	}
	res = call(t, cs, "read_target_source", map[string]any{"target": "spin", "path": "../../hone.toml"})
	if !res.IsError || errs.CodeOf(sourceErr(t, ws, "../../hone.toml")) != errs.Policy {
		t.Errorf("read_target_source outside the target: %s", text(res))
	}

	m = ok(t, "read_ledger", call(t, cs, "read_ledger", map[string]any{"target": "spin"}))
	if a, _ := m["attempts"].([]any); len(a) != 0 {
		t.Errorf("read_ledger of a fresh workspace: %v", m)
	}
	res = call(t, cs, "read_ledger", map[string]any{"target": "nope"})
	if !res.IsError || !strings.Contains(text(res), `unknown target "nope"`) {
		t.Errorf("read_ledger of an unknown target: %s", text(res))
	}
}

// refsAfterProfile records a profile entry as `hone profile run` would, written
// straight to the ledger, and returns the refs after it.
func refsAfterProfile(t *testing.T, ws *workspace.Workspace, dir string) string {
	t.Helper()
	hot := []profile.Hotspot{{Symbol: "main.count", FlatPct: 61.5, CumPct: 80, File: "count.go", Line: 12, Samples: 615, CumSamples: 800}}
	if _, err := ledger.Open(ws).Append(context.Background(), &profile.Entry{
		Common: ledger.Common{Kind: ledger.KindProfile, Target: "spin"},
		Source: "perf", Event: "cpu-clock", Samples: 1000, ValueType: "cpu/nanoseconds", Hotspots: hot,
		Counters: []profile.Counter{{Name: "instructions", Supported: false}}, Isolation: "none", Pprof: "x.pb.gz",
	}); err != nil {
		t.Fatal(err)
	}
	return refs(t, dir)
}

func sourceErr(t *testing.T, ws *workspace.Workspace, path string) error {
	t.Helper()
	_, err := source.Read(context.Background(), ws, "spin", path, 0, 0)
	return err
}

func TestProposeThenVerdict(t *testing.T) {
	tier.Jail(t)
	dir := newWorkspace(t)
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var progress []string
	cs := connect(t, dir, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}})
	idea := map[string]any{"target": "spin", "hypothesis": "a closed form replaces the loop", "hotspot": "spin.sh", "playbook_class": 5}
	with := func(diff string) map[string]any {
		m := map[string]any{"diff": diff}
		for k, v := range idea {
			m[k] = v
		}
		return m
	}

	// Refused: the diff edits hone.toml, outside the target. Same text as the CLI.
	res := call(t, cs, "propose_patch", with(readDiff(t, "outside.diff")))
	_, want := patch.Propose(context.Background(), ws, patch.Request{Target: "spin", Diff: []byte(readDiff(t, "outside.diff")),
		Hypothesis: "a closed form replaces the loop", Hotspot: "spin.sh", Class: 5})
	if !res.IsError || want == nil || text(res) != want.Error() || errs.CodeOf(want) != errs.Policy {
		t.Fatalf("outside diff: %q; want the refusal %v", text(res), want)
	}

	m := ok(t, "propose_patch", call(t, cs, "propose_patch", with(readDiff(t, "spin-gauss.diff"))))
	id, _ := m["patch_id"].(string)
	if id == "" {
		t.Fatalf("propose_patch returned no patch id: %v", m)
	}

	params := &sdk.CallToolParams{Name: "run_verdict", Arguments: map[string]any{"patch_id": id}}
	params.SetProgressToken("verdict-1")
	res, err = cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	m = ok(t, "run_verdict", res)
	if m["patch_id"] != id || m["verdict"] == "" || m["id"] == "" {
		t.Fatalf("run_verdict: %s", text(res))
	}
	// The text leads with the verdict and its summary, before the samples.
	if first, _ := res.Content[0].(*sdk.TextContent); first == nil || !strings.HasPrefix(first.Text, "verdict "+m["verdict"].(string)) || !strings.Contains(first.Text, m["summary"].(string)) {
		t.Errorf("run_verdict's text does not lead with the verdict: %v", res.Content[0])
	}
	mu.Lock()
	if len(progress) == 0 {
		t.Error("run_verdict sent no progress notifications")
	}
	mu.Unlock()

	m = ok(t, "read_ledger", call(t, cs, "read_ledger", map[string]any{"target": "spin"}))
	attempts, _ := m["attempts"].([]any)
	if len(attempts) != 1 {
		t.Fatalf("read_ledger after one attempt: %v", m)
	}
	a := attempts[0].(map[string]any)
	if v, _ := a["verdicts"].([]any); a["patch_id"] != id || len(v) != 1 {
		t.Errorf("attempt: %v", a)
	}

	// The same idea again, even with another diff, is refused as a repeat.
	res = call(t, cs, "propose_patch", with(strings.Replace(readDiff(t, "spin-gauss.diff"), "Gauss's formula", "a formula", 1)))
	if !res.IsError || !strings.Contains(text(res), "already has a verdict") {
		t.Errorf("repeated attempt: %s", text(res))
	}
}

// An optimizer that sees a verdict going badly cancels it, hoping to leave no
// trace and try again. The cancel only stops the waiting: the verdict runs to
// its end and is recorded, and the server sends no answer for the cancelled
// request, as MCP requires.
func TestCancellingAVerdictDoesNotEraseIt(t *testing.T) {
	tier.Jail(t)
	dir := newWorkspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := connect(t, dir, &sdk.ClientOptions{ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { cancel() }})
	m := ok(t, "propose_patch", call(t, s, "propose_patch", map[string]any{"target": "spin", "diff": readDiff(t, "spin-gauss.diff"),
		"hypothesis": "a closed form replaces the loop", "hotspot": "spin.sh", "playbook_class": 5}))
	params := &sdk.CallToolParams{Name: "run_verdict", Arguments: map[string]any{"patch_id": m["patch_id"]}}
	params.SetProgressToken(1)
	begin := time.Now()
	if _, err := s.CallTool(ctx, params); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run_verdict: %v; want context.Canceled", err)
	}
	t.Logf("the client stopped waiting %s after calling", time.Since(begin).Round(time.Millisecond))

	// Once the server has the cancellation, the client goes away; the server
	// ends only when the verdict has finished.
	var cancelled any
	for deadline := time.Now().Add(time.Minute); cancelled == nil; time.Sleep(10 * time.Millisecond) {
		for _, msg := range s.in.lines(t) {
			if msg["method"] == "notifications/cancelled" {
				cancelled = msg["params"].(map[string]any)["requestId"]
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never read a cancellation")
		}
	}
	s.Close()
	s.wait(t)

	ws, _ := workspace.Open(dir)
	vs, err := ledger.Open(ws).List(context.Background(), ledger.Filter{Target: "spin", Kind: ledger.KindVerdict})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].PatchID != m["patch_id"] {
		t.Fatalf("verdicts after a cancelled run_verdict: %+v; want the patch's verdict recorded", vs)
	}
	answered := 0
	for _, msg := range s.out.lines(t) {
		if _, isCall := msg["method"]; !isCall && msg["id"] != nil {
			answered++
			if msg["id"] == cancelled {
				t.Errorf("the server answered the cancelled request %v", cancelled)
			}
		}
	}
	if answered != 2 {
		t.Errorf("the server answered %d requests; want 2 (initialize, propose_patch)", answered)
	}
}

// TestStdio drives the real binary: `hone mcp --workspace DIR` over stdin/stdout.
func TestStdio(t *testing.T) {
	hone := e2e.Hone(t)
	dir := newWorkspace(t)
	cmd := exec.Command(hone, "mcp", "--workspace", filepath.Join(dir, "targets"))
	cmd.Stderr = os.Stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := slices.Sorted(slices.Values(ToolNames)); !slices.Equal(names, want) {
		t.Errorf("tools/list over stdio: %q; want %q", names, want)
	}
	m := ok(t, "read_target_source", call(t, cs, "read_target_source", map[string]any{"target": "spin", "path": "spin.sh"}))
	if m["total_lines"] != 9.0 {
		t.Errorf("read_target_source over stdio: %v", m)
	}
}
