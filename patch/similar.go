package patch

import (
	"context"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
)

// SimilarityThreshold is the token-set (Jaccard) similarity at which an
// earlier hypothesis on the same hotspot and class is reported as a warning.
const SimilarityThreshold = 0.8

// warnings gathers advice for a proposal: earlier hypotheses that are nearly
// the same idea, and a hotspot the latest profile does not list. Reading the
// ledger for advice never blocks a proposal, so errors only drop the advice.
func warnings(ctx context.Context, l *ledger.Ledger, p *Proposal) []errs.Warning {
	out := []errs.Warning{}
	prev, err := l.Attempts(ctx, ledger.Filter{Target: p.Target})
	if err == nil {
		mine := tokens(p.Hypothesis)
		for _, a := range prev {
			if a.ProposalID == "" || a.Hotspot != p.Hotspot || a.Class != p.Class || a.AttemptKey == p.AttemptKey || a.PatchID == p.PatchID {
				continue
			}
			if s := jaccard(mine, tokens(a.Hypothesis)); s >= SimilarityThreshold {
				out = append(out, errs.Warning{Code: "similar_hypothesis", Message: fmt.Sprintf("similar earlier hypothesis (%.0f%% alike) on %s, class %d: patch %s (entry %s): %q",
					s*100, a.Hotspot, a.Class, a.PatchID, a.ProposalID, errs.Clip(a.Hypothesis))})
			}
		}
	}
	if hs, ok := latestHotspots(ctx, l, p.Target); ok && !hs[p.Hotspot] {
		out = append(out, errs.Warning{Code: "hotspot_not_profiled", Message: fmt.Sprintf("hotspot %q is not among the latest profile's hotspots", p.Hotspot)})
	}
	return out
}

// latestHotspots reads the symbols of the newest profile entry, decoding only
// the fields needed here so profile's own schema stays its business.
func latestHotspots(ctx context.Context, l *ledger.Ledger, target string) (map[string]bool, bool) {
	s, err := l.Latest(ctx, target, ledger.KindProfile)
	if err != nil {
		return nil, false
	}
	var prof struct {
		Hotspots []struct {
			Symbol string `toml:"symbol"`
		} `toml:"hotspots"`
	}
	if err := toml.Unmarshal(s.Raw, &prof); err != nil || len(prof.Hotspots) == 0 {
		return nil, false
	}
	set := map[string]bool{}
	for _, h := range prof.Hotspots {
		set[h.Symbol] = true
	}
	return set, true
}

func tokens(h string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(ledger.NormalizeHypothesis(h)) {
		set[w] = true
	}
	return set
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
