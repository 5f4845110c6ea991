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
type Hotspot struct {
	Symbol     string  `toml:"symbol" json:"symbol"`
	FlatPct    float64 `toml:"flat_pct" json:"flat_pct"` // exclusive: the function itself is running
	CumPct     float64 `toml:"cum_pct" json:"cum_pct"`   // inclusive: the function is on the stack
	File       string  `toml:"file,omitempty" json:"file,omitempty"`
	Line       int     `toml:"line,omitempty" json:"line,omitempty"`         // the hottest line of the function
	LinePct    float64 `toml:"line_pct,omitempty" json:"line_pct,omitempty"` // share of samples with that line on the stack
	Samples    int64   `toml:"samples" json:"samples"`                       // samples with the function running
	CumSamples int64   `toml:"cum_samples" json:"cum_samples"`               // samples with the function on the stack
}

// Summary is what Hotspots learns from a profile besides the ranking.
type Summary struct {
	Samples   int64  // samples in the profile
	ValueType string // the weight hotspots are shares of, e.g. "cpu/nanoseconds"
}

type frameID struct {
	fn   string
	file string
	line int64
}

type acc struct {
	flat, cum   int64
	flatN, cumN int64
	lines       map[frameID]int64
}

// Hotspots ranks every function of p by exclusive share, then inclusive share,
// then name, so equal profiles always give the same list. A function counts
// once per sample in its inclusive share and a line once per sample in its
// line share, however deep the recursion. Inlined frames count as their own
// functions.
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
			a = &acc{lines: map[frameID]int64{}}
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
		seenFn = seenFn[:0]
		for i, f := range frames {
			if !containsFrame(frames[:i], f) {
				get(f.fn).lines[f] += w
			}
			if !containsString(seenFn, f.fn) {
				seenFn = append(seenFn, f.fn)
				a := get(f.fn)
				a.cum += w
				a.cumN += n
			}
		}
	}
	if total <= 0 {
		return nil, sum, errs.Failuref("the profile holds no samples; make the workload run longer or raise the sampling frequency")
	}
	out := make([]Hotspot, 0, len(byFn))
	for fn, a := range byFn {
		h := Hotspot{Symbol: fn, FlatPct: pct(a.flat, total), CumPct: pct(a.cum, total), Samples: a.flatN, CumSamples: a.cumN}
		if best, w := hottestLine(a.lines); w > 0 {
			h.File, h.Line, h.LinePct = best.file, int(best.line), pct(w, total)
		}
		out = append(out, h)
	}
	sortHotspots(out)
	return out, sum, nil
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
// before the function they were inlined into.
func stackFrames(dst []frameID, s *profile.Sample) []frameID {
	for _, l := range s.Location {
		if len(l.Line) == 0 {
			dst = append(dst, frameID{fn: unsymbolized(l)})
			continue
		}
		for _, ln := range l.Line {
			if ln.Function == nil {
				dst = append(dst, frameID{fn: unsymbolized(l)})
				continue
			}
			dst = append(dst, frameID{fn: ln.Function.Name, file: ln.Function.Filename, line: ln.Line})
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

func containsFrame(fs []frameID, f frameID) bool {
	for _, g := range fs {
		if g == f {
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
