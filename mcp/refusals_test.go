package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/playbooks"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/source"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

// Every tool refuses bad input with an isError result (never a protocol
// error the model cannot read) whose text is the CLI's message, and a refusal
// writes nothing.
func TestEveryToolRefusesWithTheCLIsWords(t *testing.T) {
	dir := newWorkspace(t)
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := connect(t, dir, nil)
	before := refs(t, dir)
	cli := func(_ any, err error) error { return err }
	for _, tc := range []struct {
		tool string
		args map[string]any
		want error // what the package function the CLI calls returns
		code errs.Code
	}{
		{"read_profile", map[string]any{"target": "nope"}, cli(profile.Latest(ctx, ws, "nope")), errs.NotFound},
		{"read_ledger", map[string]any{"target": "nope"}, cli(ws.Target("nope")), errs.NotFound},
		{"read_playbook", map[string]any{"class_number": 0}, cli(playbooks.Get(dir, 0)), errs.NotFound},
		{"read_target_source", map[string]any{"target": "spin", "path": "missing.sh"}, cli(source.Read(ctx, ws, "spin", "missing.sh", 0, 0)), errs.NotFound},
		{"read_target_source", map[string]any{"target": "spin", "path": "spin.sh", "offset": -1}, cli(source.Read(ctx, ws, "spin", "spin.sh", -1, 0)), errs.Usage},
		{"propose_patch", map[string]any{"target": "spin", "diff": "not a diff", "hypothesis": "h", "hotspot": "x", "playbook_class": 1},
			cli(patch.Propose(ctx, ws, patch.Request{Target: "spin", Diff: []byte("not a diff"), Hypothesis: "h", Hotspot: "x", Class: 1})), errs.Invalid},
		{"run_verdict", map[string]any{"patch_id": "0123456789abcdef"}, cli(verdict.Run(ctx, ws, "0123456789abcdef", verdict.Options{})), errs.NotFound},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			if tc.want == nil || errs.CodeOf(tc.want) != tc.code {
				t.Fatalf("the CLI's own call returned %v; want exit code %d", tc.want, tc.code)
			}
			res := call(t, s, tc.tool, tc.args)
			if !res.IsError || text(res) != tc.want.Error() {
				t.Errorf("%s(%v) = %q (isError %v); want the CLI's %q", tc.tool, tc.args, text(res), res.IsError, tc.want)
			}
		})
	}
	if after := refs(t, dir); after != before {
		t.Errorf("refusals changed refs:\nbefore:\n%safter:\n%s", before, after)
	}
}

// The tool list a harness is given before it starts the server is exactly
// what the server offers.
func TestToolsGivenToHarnessesAreTheServedOnes(t *testing.T) {
	defs, err := Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	served, err := connect(t, newWorkspace(t), nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	describe := func(tools []*sdk.Tool) []string {
		var out []string
		for _, tool := range tools {
			b, _ := json.Marshal(tool)
			out = append(out, string(b))
		}
		slices.Sort(out)
		return out
	}
	if got, want := describe(defs), describe(served.Tools); !slices.Equal(got, want) {
		t.Errorf("Tools() = %q;\nwant tools/list's %q", got, want)
	}
}

func TestServeRefusesOutsideAWorkspace(t *testing.T) {
	err := Serve(context.Background(), t.TempDir(), "test", StreamTransport(strings.NewReader(""), io.Discard))
	if !errs.Is(err, errs.NotFound) || !strings.Contains(err.Error(), "not inside a git repository") {
		t.Fatalf("Serve outside a repository: %v; want not found", err)
	}
}

// A script pipes requests in and closes its end at once. Every request is
// answered before the server ends, whichever way its id is spelled (the SDK
// answers id 3.0 as 3), and the cancellation of a request never made changes
// nothing.
func TestPipedSessionAnswersEveryRequest(t *testing.T) {
	dir := newWorkspace(t)
	requests := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"two","method":"tools/list"}
{"jsonrpc":"2.0","id":3.0,"method":"tools/call","params":{"name":"read_playbook","arguments":{"class_number":2}}}
{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_ledger","arguments":{"target":"spin"}}}
`
	out := &record{}
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), dir, "test", StreamTransport(strings.NewReader(requests), out))
	}()
	s := &session{served: make(chan struct{})}
	go func() {
		err := <-done
		if err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("Serve: %v", err)
		}
		close(s.served)
	}()
	s.wait(t)
	answered := map[string]bool{}
	for _, msg := range out.lines(t) {
		if _, isCall := msg["method"]; !isCall {
			id, _ := json.Marshal(msg["id"])
			answered[string(id)] = msg["error"] == nil
		}
	}
	for _, id := range []string{"1", `"two"`, "3", "4"} {
		if ok, found := answered[id]; !found || !ok {
			t.Errorf("request %s: answered %v, without error %v", id, found, ok)
		}
	}
}
