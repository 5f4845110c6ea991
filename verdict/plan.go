package verdict

import (
	"context"
	"errors"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Planned is what `hone verdict ID` would do, read exactly as Run reads it
// (the proposal re-derived from its patch commit, the rules from the
// protected tip, the command line's tightenings) with nothing run, locked
// or recorded: a dry run spends no attempt.
type Planned struct {
	PatchID string `json:"patch_id"`
	Target  string `json:"target"`
	Pin     string `json:"pin"`
	// Outcome is what Run would do first: "judge", "refuse" (an error
	// verdict with Reason, recorded without running anything) or
	// "judged" (a verdict exists; Run refuses without --rejudge).
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// The rules, from hone.toml at the protected tip (ConfigBlob).
	ConfigBlob string                   `json:"config_blob,omitempty"`
	BaseRef    string                   `json:"base_ref,omitempty"`
	Build      string                   `json:"build,omitempty"`
	Gates      []workspace.Gate         `json:"gates"`
	Protocol   *workspace.BenchConfig   `json:"protocol,omitempty"`
	Overrides  *Overrides               `json:"overrides,omitempty"`
	Sandbox    *workspace.SandboxConfig `json:"sandbox,omitempty"`
}

// Plan says what Run(ctx, ws, patchID, opts) would do.
func Plan(ctx context.Context, ws *workspace.Workspace, patchID string, opts Options) (*Planned, error) {
	prop, err := proposalOf(ctx, ws, patchID, opts)
	if err != nil {
		return nil, err
	}
	p := &Planned{PatchID: prop.PatchID, Target: prop.Target, Pin: prop.Pin, Outcome: "judge", Gates: []workspace.Gate{}}
	if _, err := priorOf(ctx, ledger.Open(ws), prop.PatchID, opts.Rejudge); errs.Is(err, errs.Policy) {
		p.Outcome, p.Detail = "judged", err.Error()
	} else if err != nil {
		return nil, err
	}
	pl, err := planOf(ctx, ws, prop, opts)
	if err != nil {
		return nil, err
	}
	if gp := pl.gp; gp != nil {
		p.ConfigBlob, p.BaseRef, p.Build, p.Gates, p.Sandbox = gp.Blob, gp.BaseRef, gp.Target.Build, append(p.Gates, gp.Target.Gates...), &gp.Config.Sandbox
	}
	if r := pl.refusal; r != nil {
		if p.Outcome == "judge" {
			p.Outcome, p.Reason, p.Detail = "refuse", r.reason, r.detail
		}
		return p, nil
	}
	p.Protocol, p.Overrides = &pl.proto, pl.over
	return p, nil
}

// proposalOf checks opts against what no hone.toml can change and looks
// the patch up (see lookupPatch).
func proposalOf(ctx context.Context, ws *workspace.Workspace, patchID string, opts Options) (proposal, error) {
	if opts.Metric != "" {
		if err := workspace.CheckMetric(opts.Metric); err != nil {
			return proposal{}, errs.Usagef("--metric: %v", err)
		}
	}
	return lookupPatch(ctx, ws, patchID)
}

// plan is what a verdict of prop rests on, read before anything of the
// patch runs: the goalposts and the protocol, or the refusal Run records
// instead. Run and Plan both read it here, so a dry run cannot say
// something other than what the verdict then does.
type plan struct {
	gp      *workspace.Goalposts // nil when refused before they were read
	proto   workspace.BenchConfig
	over    *Overrides
	refusal *refusal
}

// refusal is an error verdict recorded without running anything.
type refusal struct {
	reason, flag, detail string
	configBlob           string
}

// planOf checks, in order: the proposal's fields against its commit, the
// pin against the protected tip's goalposts (stale pin), the commit's
// changes against the allowlist there, weak isolation against this
// machine's consent, and opts against the protocol (tighten only).
func planOf(ctx context.Context, ws *workspace.Workspace, prop proposal, opts Options) (*plan, error) {
	if prop.mismatch != "" {
		return &plan{refusal: &refusal{reason: ReasonProposalMismatch, flag: ledger.FlagProposalMismatch, detail: prop.mismatch}}, nil
	}
	gp, err := ws.GoalpostsAt(ctx, prop.Target, prop.Pin)
	var stale *workspace.StalePinError
	if errors.As(err, &stale) {
		return &plan{refusal: &refusal{reason: workspace.ReasonStalePin, flag: ledger.FlagStalePin, detail: stale.Error()}}, nil
	}
	if err != nil {
		return nil, err
	}
	pl := &plan{gp: gp}
	if why, err := prop.outside(ctx, ws, gp.Target.Rules()); err != nil {
		return nil, err
	} else if why != "" {
		pl.refusal = &refusal{reason: ReasonProposalMismatch, flag: ledger.FlagProposalMismatch, detail: why, configBlob: gp.Blob}
		return pl, nil
	}
	if gp.Config.Sandbox.Isolation == workspace.IsolationWeak {
		if ok, err := workspace.WeakAllowed(ctx); err != nil {
			return nil, err
		} else if !ok {
			pl.refusal = &refusal{reason: ReasonWeakRefused, detail: weakRefused, configBlob: gp.Blob}
			return pl, nil
		}
	}
	if pl.proto, pl.over, err = protocol(gp.Target, opts); err != nil {
		return nil, err
	}
	return pl, nil
}
