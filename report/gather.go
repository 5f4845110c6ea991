package report

import (
	"context"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/safetext"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

// FromLedger gathers a report from the workspace's ledger: every attempt on
// target ("" for all targets) from the ledger's attempts view, with its
// latest verdict and who signed it, and each target's latest profile. An
// unknown target is a NotFound error.
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
	l := ledger.Open(ws)
	attempts, err := l.Attempts(ctx, ledger.Filter{Target: target})
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		ra := Attempt{Target: a.Target, PatchID: a.PatchID, Pin: a.Pin, Created: a.Proposed, Class: a.Class,
			Hotspot: a.Hotspot, Hypothesis: a.Hypothesis}
		if v := a.Latest(); v != nil {
			ra.Verdict, ra.Summary, ra.Flags, ra.Signer, ra.Trusted = v.Verdict, v.Summary, v.Flags, v.Signer, v.Trusted
			// The interval is not in the index: read it from the verdict entry.
			s, err := l.Get(ctx, v.ID)
			if err != nil {
				return nil, err
			}
			var e verdict.Entry
			if err := s.Decode(&e); err != nil {
				return nil, err
			}
			if e.Bench != nil {
				if m := e.Bench.Stat(e.Bench.Metric); m != nil && m.Pairs > 0 {
					// The interval's own level, the deciding look's, as the
					// verdict's table names it.
					ra.Metric, ra.Confidence = m.Metric, m.Confidence
					if ra.Confidence == 0 {
						ra.Confidence = e.Bench.FinalConfidence()
					}
					ra.HasSpeedup, ra.Speedup, ra.Low, ra.High = true, m.Speedup, m.CILow, m.CIHigh
				}
				for _, b := range e.Bench.Benchmarks {
					c := b.CPUStats
					ra.Benchmarks = append(ra.Benchmarks, Benchmark{Name: b.Name, Decides: b.Decides, Regressed: b.Regressed, Speedup: c.Speedup, Low: c.CILow, High: c.CIHigh})
				}
			}
		}
		r.Attempts = append(r.Attempts, ra)
	}
	if r.Pins, err = pins(ctx, ws, r.Attempts); err != nil {
		return nil, err
	}
	for _, name := range targets {
		var words []string
		for _, a := range r.Attempts {
			if a.Target == name {
				words = append(words, a.Verdict)
			}
		}
		conf := ws.Config.Bench.Confidence
		if t, err := ws.Target(name); err == nil {
			conf = t.Bench.Confidence
		}
		if h := verdict.HonestyOf(name, words, conf); h.Judged > 0 {
			r.Honesty = append(r.Honesty, h)
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
	// Entries are anyone's to push: the report shows their text escaped.
	safetext.Strings(r)
	return r, nil
}

// pins describes every pin of attempts: its date, and whether the
// protected base reaches it. A repository without a protected base (no
// hone.toml on its default branch) leaves BaseRefs empty.
func pins(ctx context.Context, ws *workspace.Workspace, attempts []Attempt) (map[string]Pin, error) {
	var refs []string
	if b, err := workspace.ProtectedBase(ctx, ws.Repo); err == nil {
		refs = b.Refs
	} else if !errs.Is(err, errs.NotFound) {
		return nil, err
	}
	out := map[string]Pin{}
	for _, a := range attempts {
		if _, done := out[a.Pin]; done || a.Pin == "" {
			continue
		}
		p := Pin{Commit: a.Pin, BaseRefs: refs}
		if c, err := ws.Store("").ReadCommit(repo.NewHash(a.Pin)); err == nil {
			p.Date = c.Committer.When
		}
		for _, ref := range refs {
			_, err := git.Run(ctx, git.Cmd{Dir: ws.Root, Isolated: true, Args: []string{"merge-base", "--is-ancestor", a.Pin, ref}})
			if err == nil {
				p.OnBase = true
				break
			}
			if code := git.ExitCode(err); code != 1 && code != 128 {
				return nil, errs.Wrap(errs.Failure, err, "cannot tell whether %s reaches pin %s", ref, git.Short(a.Pin))
			}
		}
		out[a.Pin] = p
	}
	return out, nil
}
