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
	if opts.Metric != "" {
		if err := workspace.CheckMetric(opts.Metric); err != nil {
			return nil, errs.Usagef("--metric: %v", err)
		}
	}
	prop, err := lookupPatch(ctx, ws, patchID)
	if err != nil {
		return nil, err
	}
	p := &Planned{PatchID: prop.PatchID, Target: prop.Target, Pin: prop.Pin, Outcome: "judge", Gates: []workspace.Gate{}}
	if _, err := priorOf(ctx, ledger.Open(ws), prop.PatchID, opts.Rejudge); errs.Is(err, errs.Policy) {
		p.Outcome, p.Detail = "judged", err.Error()
	} else if err != nil {
		return nil, err
	}
	if prop.mismatch != "" {
		return p.refused(ReasonProposalMismatch, prop.mismatch), nil
	}
	gp, err := ws.GoalpostsAt(ctx, prop.Target, prop.Pin)
	var stale *workspace.StalePinError
	if errors.As(err, &stale) {
		return p.refused(workspace.ReasonStalePin, stale.Error()), nil
	}
	if err != nil {
		return nil, err
	}
	p.ConfigBlob, p.BaseRef, p.Build, p.Gates, p.Sandbox = gp.Blob, gp.BaseRef, gp.Target.Build, append(p.Gates, gp.Target.Gates...), &gp.Config.Sandbox
	if why, err := prop.outside(ctx, ws, gp.Target.Rules()); err != nil {
		return nil, err
	} else if why != "" {
		return p.refused(ReasonProposalMismatch, why), nil
	}
	if gp.Config.Sandbox.Isolation == workspace.IsolationWeak {
		if ok, err := workspace.WeakAllowed(ctx); err != nil {
			return nil, err
		} else if !ok {
			return p.refused(ReasonWeakRefused, weakRefused), nil
		}
	}
	proto, over, err := protocol(gp.Target, opts)
	if err != nil {
		return nil, err
	}
	p.Protocol, p.Overrides = &proto, over
	return p, nil
}

// refused marks p as a proposal Run records as an error without running
// any of its code, unless it was judged already.
func (p *Planned) refused(reason, detail string) *Planned {
	if p.Outcome == "judge" {
		p.Outcome, p.Reason, p.Detail = "refuse", reason, detail
	}
	return p
}
