package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/git"
)

// view is what the template reads: the report plus the geometry of its
// charts, computed here so the template only places numbers.
type view struct {
	*Report
	Counts []count
	Groups []pinGroup // the attempts by pin
	Forest *forest    // nil when no attempt reached a benchmark
	Bars   []barChart // one per profile
}

// pinGroup is the attempts made from one pin, numbered as in the forest
// plot (oldest first over the whole report).
type pinGroup struct {
	Label   string
	OffBase bool
	Rows    []numbered
}

type numbered struct {
	N int
	Attempt
}

// groupByPin groups attempts by pin, in the order each pin first appears.
func groupByPin(r *Report) []pinGroup {
	var groups []pinGroup
	at := map[string]int{}
	for i, a := range r.Attempts {
		g, ok := at[a.Pin]
		if !ok {
			g = len(groups)
			at[a.Pin] = g
			label, off := pinLabel(a.Pin, r.Pins[a.Pin])
			groups = append(groups, pinGroup{Label: label, OffBase: off})
		}
		groups[g].Rows = append(groups[g].Rows, numbered{N: i + 1, Attempt: a})
	}
	return groups
}

// pinLabel says which commit a group was made from, when it was made, and
// whether the protected base holds it.
func pinLabel(commit string, p Pin) (string, bool) {
	if commit == "" {
		return "pin unknown (a verdict whose proposal this clone lacks)", false
	}
	label := "pin " + git.Short(commit)
	if !p.Date.IsZero() {
		label += " · " + p.Date.UTC().Format("2006-01-02 15:04 UTC")
	} else {
		label += " · not in this clone"
	}
	refs := make([]string, len(p.BaseRefs))
	for i, ref := range p.BaseRefs {
		refs[i] = ref
		if !strings.HasPrefix(ref, "refs/") {
			refs[i] = git.Short(ref)
		}
	}
	switch {
	case len(refs) == 0:
		return label, false
	case p.OnBase:
		return label + " · on " + strings.Join(refs, ", "), false
	}
	return label + " · NOT reachable from the protected base (" + strings.Join(refs, ", ") + "): these verdicts judge a commit no one else has", true
}

type count struct {
	Verdict string
	N       int
	Color   string
}

// verdictColors gives each verdict word its colour in the table and plots;
// "" is an attempt that has no verdict yet.
var verdictColors = map[string]string{
	"accepted":           "#1a7f37",
	"needs-human-review": "#9a6700",
	"rejected-bench":     "#cf222e",
	"rejected-gate":      "#8250df",
	"error":              "#57606a",
	"":                   "#0969da",
}

func colorOf(verdict string) string {
	if c, ok := verdictColors[verdict]; ok {
		return c
	}
	return verdictColors["error"]
}

func newView(r *Report) *view {
	v := &view{Report: r}
	seen := map[string]int{}
	for _, a := range r.Attempts {
		if _, ok := seen[a.Verdict]; !ok {
			seen[a.Verdict] = len(v.Counts)
			v.Counts = append(v.Counts, count{Verdict: a.Verdict, Color: colorOf(a.Verdict)})
		}
		v.Counts[seen[a.Verdict]].N++
	}
	v.Groups = groupByPin(r)
	v.Forest = newForest(r)
	for _, p := range r.Profiles {
		v.Bars = append(v.Bars, newBarChart(p))
	}
	return v
}

// forest is a forest plot: one row per benchmarked attempt, its speedup as a
// dot and its confidence interval as a line, on a log axis (a 2x speedup and
// a 2x slowdown are the same distance from 1).
type forest struct {
	Width, Height    int
	Left, Right, Top float64
	Bottom           float64
	Ticks            []tick
	One, Accept      float64 // x of speedup 1 and of the accept threshold
	AcceptLabel      string
	Rows             []forestRow
}

type tick struct {
	X     float64
	Label string
}

type forestRow struct {
	Y, X, XLow, XHigh float64
	// Label is cut to fit beside the plot; FullLabel, shown on hover, is
	// not.
	Label, FullLabel, Title string
	Color                   string
}

const (
	plotWidth  = 960
	labelWidth = 300
	rowHeight  = 26
)

func newForest(r *Report) *forest {
	var rows []Attempt
	var numbers []int // each row's number in the attempts table
	for i, a := range r.Attempts {
		if a.HasSpeedup && a.Speedup > 0 && a.Low > 0 && a.High > 0 {
			rows = append(rows, a)
			numbers = append(numbers, i+1)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	accept := 1 + r.Threshold
	lo, hi := math.Min(0.8, 1/accept), math.Max(1.25, accept)
	for _, a := range rows {
		lo, hi = math.Min(lo, a.Low), math.Max(hi, a.High)
	}
	// Margins on the log axis, clamped so one absurd interval cannot squash the rest.
	lo, hi = math.Max(lo/1.15, 1e-3), math.Min(hi*1.15, 1e3)
	f := &forest{Width: plotWidth, Left: labelWidth + 20, Right: plotWidth - 30, Top: 30}
	f.Bottom = f.Top + float64(len(rows)*rowHeight) + 10
	f.Height = int(f.Bottom) + 40
	x := func(s float64) float64 {
		s = math.Min(math.Max(s, lo), hi)
		return round1(f.Left + (math.Log(s)-math.Log(lo))/(math.Log(hi)-math.Log(lo))*(f.Right-f.Left))
	}
	f.One, f.Accept = x(1), x(accept)
	f.AcceptLabel = "accept ≥ " + trimFloat(accept, 3) + "×"
	for _, t := range ticks(lo, hi) {
		f.Ticks = append(f.Ticks, tick{X: x(t), Label: trimFloat(t, 3) + "×"})
	}
	for i, a := range rows {
		f.Rows = append(f.Rows, forestRow{
			Y:         f.Top + float64(i*rowHeight) + rowHeight/2 + 5,
			X:         x(a.Speedup),
			XLow:      x(a.Low),
			XHigh:     x(a.High),
			Label:     truncate(attemptLabel(numbers[i], a), 40),
			FullLabel: attemptLabel(numbers[i], a) + " (pin " + git.Short(a.Pin) + ")",
			Title:     a.Verdict + ": " + trimFloat(a.Speedup, 3) + "× [" + trimFloat(a.Low, 3) + ", " + trimFloat(a.High, 3) + "]",
			Color:     colorOf(a.Verdict),
		})
	}
	return f
}

// attemptLabel names a forest row by its number in the table and its
// hypothesis, which is what tells two attempts on one hotspot apart.
func attemptLabel(n int, a Attempt) string {
	text := a.Hypothesis
	if text == "" {
		text = a.Hotspot
	}
	return strconv.Itoa(n) + ". " + text
}

// truncate shortens s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ticks picks the 1-2-5 values inside [lo, hi], adding finer ones when the
// axis is too narrow to show at least three.
func ticks(lo, hi float64) []float64 {
	var out []float64
	for e := -3; e <= 3; e++ {
		for _, m := range []float64{1, 2, 5} {
			if t := m * math.Pow(10, float64(e)); t >= lo && t <= hi {
				out = append(out, t)
			}
		}
	}
	if len(out) < 3 {
		out = out[:0]
		for _, t := range []float64{0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2} {
			if t >= lo && t <= hi {
				out = append(out, t)
			}
		}
	}
	return out
}

// barChart shows a profile's hotspots: inclusive share as a pale bar, the
// exclusive share over it as a solid one.
type barChart struct {
	Profile
	Width, Height int
	Left, Right   float64
	Rows          []barRow
	Grid          []tick
}

type barRow struct {
	Y                         float64
	FlatWidth, CumWidth       float64
	Label, Full, Where, Value string
}

const maxBars = 15

func newBarChart(p Profile) barChart {
	if len(p.Hotspots) > maxBars {
		p.Hotspots = p.Hotspots[:maxBars]
	}
	b := barChart{Profile: p, Width: plotWidth, Left: labelWidth + 20, Right: plotWidth - 90}
	span := b.Right - b.Left
	for _, pct := range []float64{0, 25, 50, 75, 100} {
		b.Grid = append(b.Grid, tick{X: round1(b.Left + span*pct/100), Label: trimFloat(pct, 0) + "%"})
	}
	for i, h := range p.Hotspots {
		where := ""
		if h.File != "" {
			where = h.File
			if h.Line > 0 {
				where += ":" + strconv.Itoa(h.Line)
			}
		}
		sym := truncate(h.Symbol, 40)
		b.Rows = append(b.Rows, barRow{
			Y:         float64(30 + i*rowHeight),
			FlatWidth: round1(span * clampPct(h.FlatPct) / 100),
			CumWidth:  round1(span * clampPct(h.CumPct) / 100),
			Label:     sym,
			Full:      h.Symbol,
			Where:     where,
			Value:     trimFloat(h.FlatPct, 1) + "% / " + trimFloat(h.CumPct, 1) + "%",
		})
	}
	b.Height = 30 + len(b.Rows)*rowHeight + 30
	return b
}

func clampPct(p float64) float64 { return math.Min(math.Max(p, 0), 100) }

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// trimFloat formats f with at most prec decimals and no trailing zeros.
func trimFloat(f float64, prec int) string {
	s := strconv.FormatFloat(f, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
