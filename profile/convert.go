package profile

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/ianlancetaylor/demangle"

	"github.com/hone-perf/hone/internal/errs"
)

// ConvertPerfScript reads `perf script -F ScriptFields --show-mmap-events
// --no-demangle` output and builds a pprof profile: one location per distinct
// address with its mapping, the function from perf's symbol (demangled here),
// and the source file and line from the binary's own DWARF. Source paths under
// root become relative to it. Samples with the same stack are merged.
//
// Callchain addresses after the first are return addresses; hone stores them
// minus one so they name the call instruction's line, as Go's pprof does.
func ConvertPerfScript(r io.Reader, paths Paths) (*profile.Profile, error) {
	c := newConverter(paths)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer (a monstrous template symbol):
			// read the rest, then parse the whole.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			c.line(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot read perf script output")
		}
	}
	c.flush()
	return c.finish()
}

type locKey struct {
	dso    string
	pid    int
	addr   uint64 // as perf printed it
	caller bool   // a return address, not the sampled ip
}

type funcKey struct{ name, file string }

type mapKey struct {
	file               string
	start, size, pgoff uint64
}

type converter struct {
	paths Paths
	p     *profile.Profile

	dsos     map[string]string // interned dso names
	binaries map[string]*elfBinary
	mmaps    map[int][]mmapEvent
	locs     map[locKey]*profile.Location
	funcs    map[funcKey]*profile.Function
	mappings map[mapKey]*profile.Mapping
	relPaths map[string]string

	events  []string
	eventIx map[string]int
	samples map[string]*aggSample // by event and stack
	order   []*aggSample
	key     []byte

	// the sample being read
	in      bool
	pid     int
	period  int64
	event   int
	stack   []*profile.Location
	badLine int
}

func newConverter(paths Paths) *converter {
	return &converter{
		paths:    paths,
		p:        &profile.Profile{},
		dsos:     map[string]string{},
		binaries: map[string]*elfBinary{},
		mmaps:    map[int][]mmapEvent{},
		locs:     map[locKey]*profile.Location{},
		funcs:    map[funcKey]*profile.Function{},
		mappings: map[mapKey]*profile.Mapping{},
		relPaths: map[string]string{},
		eventIx:  map[string]int{},
		samples:  map[string]*aggSample{},
	}
}

func (c *converter) line(line []byte) {
	switch classify(line) {
	case lineBlank:
		c.flush()
	case lineMmap:
		if m, ok := parseMmap(line); ok {
			c.mmaps[m.pid] = append(c.mmaps[m.pid], m)
		}
	case lineHeader:
		c.flush()
		h, ok := parseHeader(line)
		if !ok {
			c.badLine++
			return
		}
		c.in, c.pid, c.period = true, h.pid, int64(h.period)
		ix, seen := c.eventIx[string(h.event)]
		if !seen {
			ix = len(c.events)
			c.events = append(c.events, string(h.event))
			c.eventIx[string(h.event)] = ix
		}
		c.event = ix
		if len(h.rest) > 0 {
			c.frame(h.rest)
		}
	case lineFrame:
		if c.in {
			c.frame(line)
		}
	}
}

func (c *converter) frame(line []byte) {
	f, ok := parseFrame(line)
	if !ok {
		c.badLine++
		return
	}
	c.stack = append(c.stack, c.location(f, len(c.stack) == 0))
}

// flush ends the sample being read, merging it with an earlier one of the
// same stack and event.
func (c *converter) flush() {
	if !c.in {
		return
	}
	c.in = false
	if len(c.stack) == 0 {
		return
	}
	c.key = c.key[:0]
	c.key = binary.AppendUvarint(c.key, uint64(c.event))
	for _, l := range c.stack {
		c.key = binary.AppendUvarint(c.key, l.ID)
	}
	a, ok := c.samples[string(c.key)]
	if !ok {
		a = &aggSample{stack: append([]*profile.Location(nil), c.stack...), event: c.event}
		c.samples[string(c.key)] = a
		c.order = append(c.order, a)
	}
	a.count++
	a.weight += c.period
	c.stack = c.stack[:0]
}

// aggSample is the samples of one stack and event, merged.
type aggSample struct {
	stack         []*profile.Location
	event         int
	count, weight int64
}

// location returns the pprof location of one frame, resolving it on first sight.
func (c *converter) location(f frame, leaf bool) *profile.Location {
	dso, ok := c.dsos[string(f.dso)]
	if !ok {
		dso = string(f.dso)
		c.dsos[dso] = dso
	}
	k := locKey{dso: dso, pid: c.pid, addr: f.ip, caller: !leaf}
	if l, ok := c.locs[k]; ok {
		return l
	}
	bin := c.binary(dso)
	runtime, vaddr, m, hasVaddr := c.resolve(bin, dso, f)
	if !leaf && runtime > 0 {
		runtime--
		vaddr--
	}
	l := &profile.Location{ID: uint64(len(c.p.Location) + 1), Mapping: m, Address: runtime}
	name, sys := symbolName(f.sym, dso)
	var frames []srcFrame
	if hasVaddr {
		frames = bin.frames(vaddr)
	}
	if len(frames) == 0 {
		frames = []srcFrame{{}}
	}
	for _, fr := range frames {
		fn, fsys := fr.fn, fr.fn
		if fn == "" {
			fn, fsys = name, sys
		}
		file := c.rel(fr.file)
		l.Line = append(l.Line, profile.Line{Function: c.function(fn, fsys, file), Line: int64(fr.line)})
	}
	c.p.Location = append(c.p.Location, l)
	c.locs[k] = l
	return l
}

func (c *converter) function(name, sys, file string) *profile.Function {
	k := funcKey{name, file}
	if f, ok := c.funcs[k]; ok {
		return f
	}
	f := &profile.Function{ID: uint64(len(c.p.Function) + 1), Name: name, SystemName: sys, Filename: file}
	c.funcs[k] = f
	c.p.Function = append(c.p.Function, f)
	return f
}

// rel makes a source path relative to the workspace, caching the answer.
func (c *converter) rel(file string) string {
	if r, ok := c.relPaths[file]; ok {
		return r
	}
	r := c.paths.rel(file)
	c.relPaths[file] = r
	return r
}

// Paths says how to read what a profile names. Source paths under Root
// (the checkout, as the jail saw it) become relative to it; other paths
// (system headers, GOROOT) stay as they are. Binaries are opened with
// Open, which maps the jail's paths to the run's folders without following
// symlinks; nil opens them where they are.
type Paths struct {
	Root string
	Open func(path string) (*os.File, error)
}

func (p Paths) rel(file string) string { return relTo(p.Root, file) }

func relTo(root, file string) string {
	if root == "" || !filepath.IsAbs(file) {
		return file
	}
	r, err := filepath.Rel(root, file)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return file
	}
	return filepath.ToSlash(r)
}

// symbolName demangles C++ and Rust symbols the way pprof shows them by
// default (no parameters, no template arguments); a frame perf could not
// name is attributed to its file, "[libc.so.6]", as perf report does.
func symbolName(sym []byte, dso string) (name, system string) {
	s := string(sym)
	if s == "" || s == "[unknown]" {
		return dsoLabel(dso), ""
	}
	if strings.HasPrefix(s, "_Z") || strings.HasPrefix(s, "_R") {
		return demangle.Filter(s, demangle.NoParams, demangle.NoEnclosingParams, demangle.NoTemplateParams), s
	}
	return s, s
}

// dsoLabel names code of a file without symbols: "[libc.so.6]", and perf's
// own bracketed names ("[unknown]", "[vdso]") as they are.
func dsoLabel(dso string) string {
	if strings.HasPrefix(dso, "[") {
		return dso
	}
	return "[" + filepath.Base(dso) + "]"
}

// finish gives each merged sample one column per event, names the
// columns and marks the mappings as symbolized so pprof does not try again.
func (c *converter) finish() (*profile.Profile, error) {
	if len(c.order) == 0 {
		msg := "perf recorded no samples; the workload may have run too briefly, so make it run longer or raise [targets.<name>.profile] frequency"
		if c.badLine > 0 {
			msg = "perf script output had no sample hone could read (" + strconv.Itoa(c.badLine) + " unreadable lines); this perf version prints an unexpected format"
		}
		return nil, errs.Failuref("%s", msg)
	}
	c.p.SampleType = []*profile.ValueType{{Type: "samples", Unit: "count"}}
	for _, e := range c.events {
		c.p.SampleType = append(c.p.SampleType, eventValueType(e))
	}
	for _, a := range c.order {
		v := make([]int64, 1+len(c.events))
		v[0], v[1+a.event] = a.count, a.weight
		c.p.Sample = append(c.p.Sample, &profile.Sample{Location: a.stack, Value: v})
	}
	c.p.DefaultSampleType = c.p.SampleType[1].Type
	c.p.PeriodType = c.p.SampleType[1]
	c.sortMappings()
	return c.p, c.p.CheckValid()
}

// eventValueType names a perf event's column: software clocks count
// nanoseconds of CPU time, anything else counts events.
func eventValueType(event string) *profile.ValueType {
	base, _, _ := strings.Cut(event, ":")
	switch base {
	case "cpu-clock", "task-clock":
		return &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	}
	return &profile.ValueType{Type: base, Unit: "count"}
}

// sortMappings puts the mapping with the most leaf samples first, since pprof
// presents the first mapping as the profiled program, and marks every mapping
// as symbolized so pprof does not try again.
func (c *converter) sortMappings() {
	weight := map[*profile.Mapping]int64{}
	for _, s := range c.p.Sample {
		weight[s.Location[0].Mapping] += s.Value[0]
	}
	sort.SliceStable(c.p.Mapping, func(i, j int) bool { return weight[c.p.Mapping[i]] > weight[c.p.Mapping[j]] })
	for i, m := range c.p.Mapping {
		m.ID = uint64(i + 1)
		m.HasFunctions, m.HasFilenames, m.HasLineNumbers = true, true, true
	}
}
