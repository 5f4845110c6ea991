package profile

import (
	"math"
	"sort"
)

// MinMove is the smallest change of a share, in percentage points, that
// Diff reports: below it, sampling noise of a short profile dominates.
const MinMove = 0.5

// Comparison is what moved between two profiles.
type Comparison struct {
	A         string  `json:"a"` // entry ids
	B         string  `json:"b"`
	TopA      string  `json:"top_a"` // the hottest symbol of each
	TopB      string  `json:"top_b"`
	MinMove   float64 `json:"min_move"`
	Moves     []Move  `json:"moves"`
	SamplesA  int64   `json:"samples_a"`
	SamplesB  int64   `json:"samples_b"`
	SameEvent bool    `json:"same_event"` // both sampled the same event, so shares compare directly
}

// Move is one hotspot whose share changed by at least MinMove points. A
// symbol absent from one side's stored hotspots counts as 0% there.
type Move struct {
	Symbol    string  `json:"symbol"`
	Status    string  `json:"status"` // "moved", "new" (only in B) or "gone" (only in A)
	FlatA     float64 `json:"flat_pct_a"`
	FlatB     float64 `json:"flat_pct_b"`
	FlatDelta float64 `json:"flat_delta"`
	CumA      float64 `json:"cum_pct_a"`
	CumB      float64 `json:"cum_pct_b"`
	CumDelta  float64 `json:"cum_delta"`
}

// Diff compares the hotspots of a (before) and b (after), biggest moves of
// the exclusive share first.
func Diff(a, b *Entry) *Comparison {
	c := &Comparison{A: a.ID, B: b.ID, MinMove: MinMove, SamplesA: a.Samples, SamplesB: b.Samples, SameEvent: a.Event == b.Event, Moves: []Move{}}
	if len(a.Hotspots) > 0 {
		c.TopA = a.Hotspots[0].Symbol
	}
	if len(b.Hotspots) > 0 {
		c.TopB = b.Hotspots[0].Symbol
	}
	inA := map[string]Hotspot{}
	for _, h := range a.Hotspots {
		inA[h.Symbol] = h
	}
	inB := map[string]Hotspot{}
	for _, h := range b.Hotspots {
		inB[h.Symbol] = h
	}
	add := func(sym string) {
		ha, okA := inA[sym]
		hb, okB := inB[sym]
		m := Move{Symbol: sym, Status: "moved", FlatA: ha.FlatPct, FlatB: hb.FlatPct, CumA: ha.CumPct, CumB: hb.CumPct}
		m.FlatDelta, m.CumDelta = round2(m.FlatB-m.FlatA), round2(m.CumB-m.CumA)
		switch {
		case !okA:
			m.Status = "new"
		case !okB:
			m.Status = "gone"
		}
		if math.Abs(m.FlatDelta) >= MinMove || math.Abs(m.CumDelta) >= MinMove {
			c.Moves = append(c.Moves, m)
		}
	}
	for _, h := range a.Hotspots {
		add(h.Symbol)
	}
	for _, h := range b.Hotspots {
		if _, ok := inA[h.Symbol]; !ok {
			add(h.Symbol)
		}
	}
	sort.Slice(c.Moves, func(i, j int) bool {
		x, y := c.Moves[i], c.Moves[j]
		if dx, dy := math.Abs(x.FlatDelta), math.Abs(y.FlatDelta); dx != dy {
			return dx > dy
		}
		if dx, dy := math.Abs(x.CumDelta), math.Abs(y.CumDelta); dx != dy {
			return dx > dy
		}
		return x.Symbol < y.Symbol
	})
	return c
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
