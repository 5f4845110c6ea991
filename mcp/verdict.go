package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hone-perf/hone/runner"
	"github.com/hone-perf/hone/verdict"
)

type verdictIn struct {
	PatchID string `json:"patch_id" jsonschema:"the id propose_patch returned"`
}

func (h *handlers) addVerdictTool(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{
		Name:        "run_verdict",
		Description: "Judge a proposed patch: build the pin and the patch in fresh checkouts, run the target's gates, then benchmark baseline and candidate in interleaved pairs until the speedup's confidence interval decides. Records and returns the verdict entry (accepted, needs-human-review, rejected-gate, rejected-bench or error) with gates, bench statistics and raw samples. This is the only way to learn whether a change worked. A patch is judged once: one that already has a verdict (cancelled included) is refused, and only a person can judge it again. Gates and bench get a fresh input seed (HONE_SEED, {seed}), and every bench run's output must equal the baseline's. Sends progress notifications when the request carries a progress token. Cancelling the request only stops the waiting: the verdict runs to its end and is recorded (read_ledger shows it), and the cancelled request gets no answer.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, h.runVerdict)
}

// runVerdict judges a patch. A client that cancels the call stops waiting,
// but the verdict goes on to its end and is recorded: otherwise cancelling a
// verdict that was going badly would erase the attempt. The answer to a
// cancelled call is written and then dropped by StreamTransport, as MCP
// requires. Only the server's own end stops the verdict.
func (h *handlers) runVerdict(ctx context.Context, req *sdk.CallToolRequest, in verdictIn) (*sdk.CallToolResult, *verdict.Entry, error) {
	ws, err := h.workspace()
	if err != nil {
		return nil, nil, refusal(err)
	}
	vctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	defer context.AfterFunc(h.life, stop)()
	// A clone with a runner remote asks the fleet (runner.Judge), whose
	// progress lines go to the client the same way.
	notify := notifier(ctx, req)
	opts := verdict.Options{}
	if notify != nil {
		opts.Progress = func(p verdict.Progress) { notify(describe(p)) }
	}
	e, err := runner.Judge(vctx, ws, in.PatchID, opts, notify)
	if err != nil {
		return nil, nil, refusal(err)
	}
	return verdictAnswer(e), e, nil
}

// verdictAnswer is run_verdict's text: the verdict and its summary first,
// on a line of their own, then the whole entry in the struct's order
// (identity, verdict, summary, then gates, bench and raw samples), where an
// agent reading the text meets the answer before thousands of samples.
func verdictAnswer(e *verdict.Entry) *sdk.CallToolResult {
	head := e.Verdict
	if e.Reason != "" {
		head += " (" + e.Reason + ")"
	}
	body, err := json.Marshal(e)
	if err != nil {
		return nil
	}
	return &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "verdict " + head + ": " + e.Summary},
		&sdk.TextContent{Text: string(body)},
	}}
}

// notifier forwards progress lines to the client as MCP progress
// notifications, when the client asked for them with a progress token;
// nil when it did not.
func notifier(ctx context.Context, req *sdk.CallToolRequest) func(string) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	var n float64
	return func(line string) {
		if ctx.Err() != nil {
			return // the client cancelled the call and stopped listening
		}
		n++ // progress must increase with every notification
		params := &sdk.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: line}
		// A client that stopped listening must not fail the verdict.
		_ = req.Session.NotifyProgress(ctx, params)
	}
}

// describe renders a progress step as one line for the client to show.
func describe(p verdict.Progress) string {
	switch p.Phase {
	case "gate":
		return "gate " + p.Gate
	case "bench":
		s := fmt.Sprintf("bench %s: %d/%d pairs", p.Metric, p.Pairs, p.MaxPairs)
		if p.Speedup > 0 {
			s += fmt.Sprintf(", speedup %.3f [%.3f, %.3f]", p.Speedup, p.CILow, p.CIHigh)
		}
		return s
	}
	return p.Phase
}
