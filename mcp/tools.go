package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hone-perf/hone/internal/safetext"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/playbooks"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/source"
)

type targetIn struct {
	Target string `json:"target" jsonschema:"name of the target, as in hone.toml [targets.NAME]"`
}

type ledgerOut struct {
	Target   string           `json:"target"`
	Attempts []ledger.Attempt `json:"attempts" jsonschema:"every earlier attempt on the target, oldest first, each verdict with its signer"`
}

type playbookIn struct {
	ClassNumber int `json:"class_number" jsonschema:"the playbook class, 1 to 7 (cheapest first)"`
}

type sourceIn struct {
	Target string `json:"target" jsonschema:"name of the target"`
	Path   string `json:"path" jsonschema:"path relative to the target's directory; empty or . for its root, a directory lists its entries"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to show, 1-based (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most lines to show (default 2000)"`
}

type proposeIn struct {
	Target        string `json:"target" jsonschema:"name of the target"`
	Diff          string `json:"diff" jsonschema:"a git-style unified diff (a/ and b/ prefixes) against the target's pin, touching only the target's allowlist"`
	Hypothesis    string `json:"hypothesis" jsonschema:"why the change should be faster, in a sentence; it is part of the attempt key"`
	Hotspot       string `json:"hotspot" jsonschema:"the profile symbol the change speeds up"`
	PlaybookClass int    `json:"playbook_class" jsonschema:"the playbook class applied, 1 to 7"`
}

func (h *handlers) addTools(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{
		Name:        "read_profile",
		Description: "The target's latest profile: hotspots ranked by exclusive (flat) share, each with its inclusive share and source file:line, and the perf stat counters this machine supports (unsupported ones are absent, never zero). Read-only.",
		Annotations: readOnly(),
	}, h.readProfile)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "read_ledger",
		Description: "Every earlier attempt on the target: the patch, its hotspot, playbook class and hypothesis, and the verdicts it got. This is the anti-double-attempt memory: never retry a (hotspot, playbook class, hypothesis) that already has a verdict. Read-only.",
		Annotations: readOnly(),
	}, h.readLedger)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "read_playbook",
		Description: "The markdown of one playbook class (1-7, cheapest first): preconditions, procedure, verification and known failure modes. Read-only.",
		Annotations: readOnly(),
	}, h.readPlaybook)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "read_target_source",
		Description: "A file (numbered lines, paged with offset and limit) or a directory listing of the target exactly as it is at its pinned commit, which is what patches apply to. Read-only.",
		Annotations: readOnly(),
	}, h.readSource)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "propose_patch",
		Description: "Submit one patch with the hypothesis it tests. hone refuses a diff that touches anything outside the target's allowlist (as hone.toml at the protected tip defines it), an attempt (hotspot, class, hypothesis) that already has a verdict at the same pin, and a diff that is a judged patch's in other words (comments, whitespace, renamed new identifiers); otherwise it applies the diff with git onto the pin, stores it as a patch commit and records the proposal. Returns the patch id to pass to run_verdict.",
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, h.proposePatch)
	h.addVerdictTool(s)
}

// profileHotspots is how many hotspots read_profile returns: enough to choose
// from, few enough to leave the model room to read source.
const profileHotspots = 20

func (h *handlers) readProfile(ctx context.Context, _ *sdk.CallToolRequest, in targetIn) (*sdk.CallToolResult, *profile.Entry, error) {
	ws, err := h.workspace()
	if err != nil {
		return nil, nil, refusal(err)
	}
	e, err := profile.Latest(ctx, ws, in.Target)
	if err != nil {
		return nil, nil, refusal(err)
	}
	return nil, e.Top(profileHotspots), nil
}

func (h *handlers) readLedger(ctx context.Context, _ *sdk.CallToolRequest, in targetIn) (*sdk.CallToolResult, ledgerOut, error) {
	ws, err := h.workspace()
	if err != nil {
		return nil, ledgerOut{}, refusal(err)
	}
	if _, err := ws.Target(in.Target); err != nil {
		return nil, ledgerOut{}, refusal(err)
	}
	attempts, err := ledger.Open(ws).Attempts(ctx, ledger.Filter{Target: in.Target})
	if err != nil {
		return nil, ledgerOut{}, refusal(err)
	}
	out := ledgerOut{Target: in.Target, Attempts: attempts}
	// Entries are anyone's to push: an agent reads their text escaped.
	safetext.Strings(&out)
	return nil, out, nil
}

func (h *handlers) readPlaybook(ctx context.Context, _ *sdk.CallToolRequest, in playbookIn) (*sdk.CallToolResult, *playbooks.Playbook, error) {
	ws, err := h.workspace()
	if err != nil {
		return nil, nil, refusal(err)
	}
	p, err := playbooks.Get(ws.Root, in.ClassNumber)
	if err != nil {
		return nil, nil, refusal(err)
	}
	return nil, p, nil
}

func (h *handlers) readSource(ctx context.Context, _ *sdk.CallToolRequest, in sourceIn) (*sdk.CallToolResult, *source.View, error) {
	ws, err := h.workspace()
	if err != nil {
		return nil, nil, refusal(err)
	}
	v, err := source.Read(ctx, ws, in.Target, in.Path, in.Offset, in.Limit)
	if err != nil {
		return nil, nil, refusal(err)
	}
	return nil, v, nil
}

func (h *handlers) proposePatch(ctx context.Context, _ *sdk.CallToolRequest, in proposeIn) (*sdk.CallToolResult, *patch.Result, error) {
	ws, err := h.workspace()
	if err != nil {
		return nil, nil, refusal(err)
	}
	res, err := patch.Propose(ctx, ws, patch.Request{
		Target: in.Target, Diff: []byte(in.Diff), Hypothesis: in.Hypothesis,
		Hotspot: in.Hotspot, Class: in.PlaybookClass,
	})
	if err != nil {
		return nil, nil, refusal(err)
	}
	return nil, res, nil
}
