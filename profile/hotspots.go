package profile

import (
	"fmt"
	"math"
	"sort"

	"github.com/google/pprof/profile"

	"github.com/hone-perf/hone/internal/errs"
)

// Hotspot is one function of a profile. Percentages are shares of the whole
// profile's weight (CPU time, or event count), rounded to 0.01.
//
// Line is where the function spends its own time: the line of the sampled
// instruction after inline expansion, the line `go tool pprof -lines` gives
// the most flat weight. A function with no time of its own (it only calls)
// gets the call line through which most of its inclusive time passes.
// LinePct is that line's share: own time, or time spent below that call.
type Hotspot struct {
	Symbol     string  `toml:"symbol" json:"symbol"`
	FlatPct    float64 `toml:"flat_pct" json:"flat_pct"` // exclusive: the function itself is running
	CumPct     float64 `toml:"cum_pct" json:"cum_pct"`   // inclusive: the function is on the stack
	File       string  `toml:"file,omitempty" json:"file,omitempty"`
	Line       int     `toml:"line,omitempty" json:"line,omitempty"`         // the hottest line of the function
	LinePct    float64 `toml:"line_pct,omitempty" json:"line_pct,omitempty"` // that line's share, see above
	Samples    int64   `toml:"samples" json:"samples"`                       // samples with the function running
	CumSamples int64   `toml:"cum_samples" json:"cum_samples"`               // samples with the function on the stack
	// InlinedInto names the function whose compiled body holds most of this
	// one's time, when the compiler inlined it there: the symbol a
	// disassembler or perf report would show for that code.
	InlinedInto string `toml:"inlined_into,omitempty" json:"inlined_into,omitempty"`
}

// Label is the symbol as people read it: "same (inlined into find_word)".
func (h Hotspot) Label() string {
	if h.InlinedInto == "" {
		return h.Symbol
	}
	return h.Symbol + " (inlined into " + h.InlinedInto + ")"
}

// Summary is what Hotspots learns from a profile besides the ranking.
type Summary struct {
	Samples   int64  // samples in the profile
	ValueType string // the weight hotspots are shares of, e.g. "cpu/nanoseconds"
}

// frameID is one source-level frame: a function at a line. host is the
// function whose compiled body the code lives in when fn was inlined there.
type frameID struct {
	fn   string
	file string
	line int64
	host string
}

// at is the frame without its host: what pprof -lines tells apart.
func (f frameID) at() frameID { return frameID{fn: f.fn, file: f.file, line: f.line} }

type acc struct {
	flat, cum   int64
	flatN, cumN int64
	// Weight by line and by inlining host, of the function's own time and
	// of its inclusive time.
	flatLines, cumLines map[frameID]int64
	flatHosts, cumHosts map[string]int64
}

// Hotspots ranks every function of p by exclusive share, then inclusive share,
// then name, so equal profiles always give the same list. A function counts
// once per sample in its inclusive share and a line once per sample in its
// line share, however deep the recursion. Inlined frames count as their own
// functions, as in pprof.
func Hotspots(p *profile.Profile) ([]Hotspot, Summary, error) {
	vi, ni := valueIndex(p)
	var sum Summary
	if vi < 0 {
		return nil, sum, errs.Invalidf("the profile has no sample values")
	}
	sum.ValueType = p.SampleType[vi].Type + "/" + p.SampleType[vi].Unit
	byFn := map[string]*acc{}
	get := func(fn string) *acc {
		a := byFn[fn]
		if a == nil {
			a = &acc{flatLines: map[frameID]int64{}, cumLines: map[frameID]int64{}, flatHosts: map[string]int64{}, cumHosts: map[string]int64{}}
			byFn[fn] = a
		}
		return a
	}
	var total int64
	var frames []frameID
	var seenFn []string
	for _, s := range p.Sample {
		w, n := s.Value[vi], int64(1)
		if ni >= 0 {
			n = s.Value[ni]
		}
		if w == 0 && n == 0 {
			continue
		}
		total += w
		sum.Samples += n
		frames = stackFrames(frames[:0], s)
		if len(frames) == 0 {
			continue
		}
		leaf := get(frames[0].fn)
		leaf.flat += w
		leaf.flatN += n
		leaf.flatLines[frames[0].at()] += w
		leaf.flatHosts[frames[0].host] += w
		seenFn = seenFn[:0]
		for i, f := range frames {
			a := get(f.fn)
			if !containsLine(frames[:i], f) {
				a.cumLines[f.at()] += w
			}
			if !containsString(seenFn, f.fn) {
				seenFn = append(seenFn, f.fn)
				a.cum += w
				a.cumN += n
				a.cumHosts[f.host] += w
			}
		}
	}
	if total <= 0 {
		return nil, sum, errs.Failuref("the profile holds no samples; make the workload run longer or raise the sampling frequency")
	}
	out := make([]Hotspot, 0, len(byFn))
	for fn, a := range byFn {
		h := Hotspot{Symbol: fn, FlatPct: pct(a.flat, total), CumPct: pct(a.cum, total), Samples: a.flatN, CumSamples: a.cumN}
		lines, hosts, weight := a.flatLines, a.flatHosts, a.flat
		if best, _ := hottestLine(lines); best.line == 0 {
			lines, hosts, weight = a.cumLines, a.cumHosts, a.cum
		}
		if best, w := hottestLine(lines); w > 0 {
			h.File, h.Line, h.LinePct = best.file, int(best.line), pct(w, total)
		}
		h.InlinedInto = mainHost(hosts, weight, fn)
		out = append(out, h)
	}
	sortHotspots(out)
	return out, sum, nil
}

// mainHost is the function that most of weight was inlined into, when more
// than half of it was inlined into one function other than fn itself.
func mainHost(hosts map[string]int64, weight int64, fn string) string {
	best, bw := "", int64(0)
	for h, w := range hosts {
		if h != "" && h != fn && (w > bw || (w == bw && h < best)) {
			best, bw = h, w
		}
	}
	if 2*bw <= weight {
		return ""
	}
	return best
}

func sortHotspots(hs []Hotspot) {
	sort.Slice(hs, func(i, j int) bool {
		a, b := hs[i], hs[j]
		if a.FlatPct != b.FlatPct {
			return a.FlatPct > b.FlatPct
		}
		if a.CumPct != b.CumPct {
			return a.CumPct > b.CumPct
		}
		return a.Symbol < b.Symbol
	})
}

// hottestLine picks the line with the most weight; ties go to the earlier
// file and line, so the choice is stable. Lines without a number lose to any
// line with one.
func hottestLine(lines map[frameID]int64) (frameID, int64) {
	var best frameID
	var bw int64 = -1
	for f, w := range lines {
		if f.line == 0 {
			continue
		}
		if w > bw || (w == bw && (f.file < best.file || (f.file == best.file && f.line < best.line))) {
			best, bw = f, w
		}
	}
	return best, bw
}

// stackFrames lists a sample's frames from the leaf outwards, inlined frames
// before the function they were inlined into, each inlined frame naming its
// host: the function its location's code belongs to.
func stackFrames(dst []frameID, s *profile.Sample) []frameID {
	for _, l := range s.Location {
		if len(l.Line) == 0 {
			dst = append(dst, frameID{fn: unsymbolized(l)})
			continue
		}
		host := ""
		if last := l.Line[len(l.Line)-1].Function; last != nil {
			host = last.Name
		}
		for i, ln := range l.Line {
			if ln.Function == nil {
				dst = append(dst, frameID{fn: unsymbolized(l)})
				continue
			}
			f := frameID{fn: ln.Function.Name, file: ln.Function.Filename, line: ln.Line}
			if i < len(l.Line)-1 {
				f.host = host
			}
			dst = append(dst, f)
		}
	}
	return dst
}

// unsymbolized names a location without functions by its file, as perf
// report does, or by its address when it has no mapping.
func unsymbolized(l *profile.Location) string {
	if l.Mapping != nil && l.Mapping.File != "" {
		return dsoLabel(l.Mapping.File)
	}
	return fmt.Sprintf("0x%x", l.Address)
}

// valueIndex picks the weight column (the default sample type, else the last
// column, which is CPU time in Go profiles) and the sample-count column.
func valueIndex(p *profile.Profile) (value, count int) {
	value, count = -1, -1
	for i, t := range p.SampleType {
		if t.Type == "samples" && t.Unit == "count" {
			count = i
		}
	}
	if n := len(p.SampleType); n > 0 {
		value = n - 1
	}
	for i, t := range p.SampleType {
		if p.DefaultSampleType != "" && t.Type == p.DefaultSampleType {
			value = i
		}
	}
	return value, count
}

// containsLine reports whether fs holds f's function at f's line.
func containsLine(fs []frameID, f frameID) bool {
	for _, g := range fs {
		if g.at() == f.at() {
			return true
		}
	}
	return false
}

func containsString(ss []string, s string) bool {
	for _, t := range ss {
		if t == s {
			return true
		}
	}
	return false
}

func pct(part, total int64) float64 {
	return math.Round(float64(part)/float64(total)*10000) / 100
}
