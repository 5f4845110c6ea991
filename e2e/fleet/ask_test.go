package fleet

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hone-perf/hone/internal/testproc"
)

type askedVerdict struct {
	ID          string `json:"id"`
	PatchID     string `json:"patch_id"`
	Verdict     string `json:"verdict"`
	RunnerClass string `json:"runner_class"`
}

// An agent clone with no key and a runner remote set asks for verdicts the
// way it always did, through hone verdict and through MCP run_verdict, and
// gets the fleet's trusted verdicts back, with progress lines while it waits.
func TestAgentWithoutAKeyGetsTheFleetsVerdict(t *testing.T) {
	f := newFixture(t, 1)
	agent := f.clone("agent", "")
	f.must(agent, "git", "config", "hone.runnerRemote", "origin")
	// A hang fails in minutes, not at the package's limit: the wait is the
	// agent's own setting (the protocol is the tip's).
	f.write(agent, "hone.toml", honeToml+"\n[runner]\nwait = \"5m\"\n")
	shell := f.propose(agent, "by shell", honestPatch)
	viaMCP := f.propose(agent, "by mcp", patch(`int main(void) { /* mcp */ puts("1"); return 0; }`))
	// The proposals are on the remote before the runner starts: a runner
	// that found no work stops after --idle, and under load the agent's
	// first push could come later than that, leaving the ask to wait for
	// a runner that had gone (an hour, before the wait above).
	f.must(agent, "hone", "ledger", "push")
	r := f.startRunner(f.clone("runner0", f.keys[0]), "--name", "runner0", "--class", "quiet", "--idle", "20s", "--poll", "300ms")

	out, errOut, code := f.run(agent, "hone", "verdict", shell, "--json")
	var v askedVerdict
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil {
		t.Fatalf("hone verdict: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if v.PatchID != shell || v.Verdict == "" || v.RunnerClass != "quiet" {
		t.Errorf("hone verdict returned %+v, want the quiet runner's verdict on %s", v, shell)
	}
	out, errOut, code = f.run(agent, "hone", "verdict", shell)
	if code != 0 || !strings.Contains(out, v.Verdict) {
		t.Errorf("asking again: exit %d\n%s%s", code, out, errOut)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var lines []string
	client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, req.Params.Message)
		},
	})
	server := f.command(agent, "hone", "mcp")
	serverErr := &testproc.Buffer{}
	server.Stderr = serverErr
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: server}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	params := &sdk.CallToolParams{Name: "run_verdict", Arguments: map[string]any{"patch_id": viaMCP}}
	params.SetProgressToken("t")
	res, err := session.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("run_verdict: %v\nhone mcp's stderr:\n%s", err, serverErr)
	}
	if res.IsError {
		t.Fatalf("run_verdict failed: %s", toolText(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var mv askedVerdict
	if err := json.Unmarshal(raw, &mv); err != nil {
		t.Fatal(err)
	}
	if mv.PatchID != viaMCP || mv.Verdict == "" || mv.RunnerClass != "quiet" {
		t.Errorf("run_verdict returned %+v, want the quiet runner's verdict on %s", mv, viaMCP)
	}
	mu.Lock()
	seen := strings.Join(lines, "\n")
	mu.Unlock()
	if !strings.Contains(seen, "pushing proposal "+viaMCP) {
		t.Errorf("run_verdict's progress:\n%s", seen)
	}
	for _, l := range f.entries(agent, "verdict") {
		if l.Signer != "runner0@fleet" {
			t.Errorf("verdict %s signed by %s", l.ID, l.Signer)
		}
	}
	r.wait(t, 2*time.Minute)
}

// An agent asks the fleet while no runner is there: after [runner] wait it
// is told the proposal is queued, exit 8, and no verdict is made up.
func TestAgentAskingAnIdleFleetIsToldTheProposalIsQueued(t *testing.T) {
	f := newFixture(t, 1)
	agent := f.clone("agent", "")
	f.must(agent, "git", "config", "hone.runnerRemote", "origin")
	f.write(agent, "hone.toml", honeToml+"\n[runner]\nwait = \"2s\"\n")
	id := f.propose(agent, "nobody there", honestPatch)
	out, errOut, code := f.run(agent, "hone", "verdict", id)
	if code != 8 || !strings.Contains(errOut, "it is queued") || !strings.Contains(errOut, "hone verdict "+id+": queued") {
		t.Fatalf("exit %d, want 8 saying it is queued\n%s%s", code, out, errOut)
	}
	if vs := f.entries(agent, "verdict"); len(vs) != 0 {
		t.Fatalf("verdicts appeared: %+v", vs)
	}
}

func toolText(res *sdk.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n")
}
