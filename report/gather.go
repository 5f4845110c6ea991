package report

import (
	"context"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

// FromLedger gathers a report from the workspace's ledger: every proposal of
// target ("" for all targets) with its latest verdict, and each target's
// latest profile. An unknown target is a NotFound error.
func FromLedger(ctx context.Context, ws *workspace.Workspace, target string) (*Report, error) {
	r := &Report{Workspace: ws.Root, Target: target, Generated: time.Now(), Threshold: ws.Config.Bench.Threshold}
	targets := ws.TargetNames()
	if target != "" {
		t, err := ws.Target(target)
		if err != nil {
			return nil, err
		}
		r.Threshold = t.Bench.Threshold
		targets = []string{target}
	}
	entries, err := ledger.Open(ws).List(ctx, ledger.Filter{Target: target})
	if err != nil {
		return nil, err
	}
	byPatch := map[string]int{} // patch id -> index in r.Attempts
	attempt := func(c *ledger.Common) *Attempt {
		i, ok := byPatch[c.PatchID]
		if !ok {
			i = len(r.Attempts)
			byPatch[c.PatchID] = i
			r.Attempts = append(r.Attempts, Attempt{Target: c.Target, PatchID: c.PatchID, Created: c.Created,
				Class: c.Class, Hotspot: c.Hotspot, Hypothesis: c.Hypothesis})
		}
		return &r.Attempts[i]
	}
	for _, s := range entries {
		switch s.Kind {
		case ledger.KindProposal:
			attempt(&s.Common)
		case ledger.KindVerdict:
			var v verdict.Entry
			if err := s.Decode(&v); err != nil {
				return nil, err
			}
			// Entries come oldest first, so a later verdict on the same
			// patch (a re-run) replaces the earlier one.
			a := attempt(&s.Common)
			a.Verdict, a.Summary = v.Verdict, v.Summary
			a.HasSpeedup = false
			if v.Bench != nil {
				if m := v.Bench.Stat(v.Bench.Metric); m != nil && m.Pairs > 0 {
					a.Metric, a.Confidence = m.Metric, v.Bench.Confidence
					a.HasSpeedup, a.Speedup, a.Low, a.High = true, m.Speedup, m.CILow, m.CIHigh
				}
			}
		}
	}
	for _, name := range targets {
		p, err := profile.Latest(ctx, ws, name)
		if errs.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		rp := Profile{Target: name, ID: p.ID, Created: p.Created, Event: p.Event, Samples: int(p.Samples)}
		for _, h := range p.Hotspots {
			rp.Hotspots = append(rp.Hotspots, Hotspot{Symbol: h.Symbol, FlatPct: h.FlatPct, CumPct: h.CumPct, File: h.File, Line: h.Line})
		}
		r.Profiles = append(r.Profiles, rp)
	}
	return r, nil
}
