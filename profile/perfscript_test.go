package profile

import (
	"bytes"
	"debug/elf"
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		name, line  string
		pid         int
		period      uint64
		event, rest string
		ok          bool
	}{
		{name: "hone's fields", line: " 10379/10379   392.820619:    1001001 cpu-clock: \n", pid: 10379, period: 1001001, event: "cpu-clock", ok: true},
		{name: "comm with spaces and cpu", line: "my prog 12/13 [001] 5.000001: 250 cycles:u: \n", pid: 12, period: 250, event: "cycles:u", ok: true},
		{name: "no period", line: "w 7/7 1.5: cpu-clock:\n", pid: 7, period: 1, event: "cpu-clock", ok: true},
		{name: "no callchain: frame on the header", line: "7/7 1.5: 10 cpu-clock:  55fb7e8cb19e heavy+0x1e (/tmp/pe/w)\n", pid: 7, period: 10, event: "cpu-clock", rest: "55fb7e8cb19e heavy+0x1e (/tmp/pe/w)", ok: true},
		{name: "no pid", line: "garbage line\n"},
		{name: "no event", line: "7/7 1.5: 10\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, ok := parseHeader([]byte(tc.line))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if h.pid != tc.pid || h.period != tc.period || string(h.event) != tc.event || string(h.rest) != tc.rest {
				t.Errorf("got pid %d period %d event %q rest %q", h.pid, h.period, h.event, h.rest)
			}
		})
	}
}

func TestParseFrame(t *testing.T) {
	for _, tc := range []struct {
		name, line, sym, dso string
		ip, off              uint64
		ok                   bool
	}{
		{name: "C", line: "\t            11a8 heavy+0x28 (/tmp/pe/w)\n", ip: 0x11a8, sym: "heavy", off: 0x28, dso: "/tmp/pe/w", ok: true},
		{name: "Go symbol with spaces", line: "\t  4c49d4 type:.eq.[2]interface {}+0x14 (/x/gw)\n", ip: 0x4c49d4, sym: "type:.eq.[2]interface {}", off: 0x14, dso: "/x/gw", ok: true},
		{name: "unknown", line: "\t7f00deadbeef [unknown] ([unknown])\n", ip: 0x7f00deadbeef, sym: "[unknown]", dso: "[unknown]", ok: true},
		{name: "dso with spaces", line: "\t10 f+0x1 (/a dir/b)\n", ip: 0x10, sym: "f", off: 1, dso: "/a dir/b", ok: true},
		{name: "bad ip", line: "\tzzz f (/b)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := parseFrame([]byte(tc.line))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && (f.ip != tc.ip || string(f.sym) != tc.sym || f.symoff != tc.off || string(f.dso) != tc.dso) {
				t.Errorf("got %x %q +%x %q", f.ip, f.sym, f.symoff, f.dso)
			}
		})
	}
}

func TestParseMmap(t *testing.T) {
	m, ok := parseMmap([]byte("w 10379/10379   392.819627: PERF_RECORD_MMAP2 10379/10379: [0x558f77731000(0x1000) @ 0x1000 fe:00 9978583 1126304342]: r-xp /tmp/pe/w\n"))
	if !ok || m.pid != 10379 || m.start != 0x558f77731000 || m.size != 0x1000 || m.pgoff != 0x1000 || m.file != "/tmp/pe/w" {
		t.Errorf("MMAP2: %+v %v", m, ok)
	}
	if _, ok := parseMmap([]byte("1/1 1.0: PERF_RECORD_MMAP2 1/1: [0x1000(0x1000) @ 0 fe:00 1 0]: rw-p /data\n")); ok {
		t.Error("a non-executable mapping was kept")
	}
	m, ok = parseMmap([]byte("    0/0 0.000000: PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x120bb08) @ 0xffffffff81000000]: x [kernel.kallsyms]_text\n"))
	if !ok || m.pid != -1 || m.file != "[kernel.kallsyms]_text" {
		t.Errorf("kernel MMAP: %+v %v", m, ok)
	}
}

// TestHotspotsRecursion checks that a recursive function counts once per
// sample in its inclusive share, and that ties are broken by name.
func TestHotspotsRecursion(t *testing.T) {
	script := `1/1 1.0: 100 cpu-clock:
	10 rec+0x0 ([unknown])
	20 rec+0x0 ([unknown])
	20 rec+0x0 ([unknown])
	30 main+0x0 ([unknown])

1/1 1.1: 100 cpu-clock:
	40 b+0x0 ([unknown])
	30 main+0x0 ([unknown])

1/1 1.2: 100 cpu-clock:
	50 a+0x0 ([unknown])
	30 main+0x0 ([unknown])

1/1 1.3: 100 cpu-clock:
	10 rec+0x0 ([unknown])
	30 main+0x0 ([unknown])
`
	p, err := ConvertPerfScript(strings.NewReader(script), Paths{})
	if err != nil {
		t.Fatal(err)
	}
	hs, sum, err := Hotspots(p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Samples != 4 || sum.ValueType != "cpu/nanoseconds" {
		t.Errorf("summary %+v", sum)
	}
	var got []string
	for _, h := range hs {
		got = append(got, fmt.Sprintf("%s %.0f/%.0f", h.Symbol, h.FlatPct, h.CumPct))
	}
	want := []string{"rec 50/50", "a 25/25", "b 25/25", "main 0/100"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("hotspots %v, want %v", got, want)
	}
}

func TestParseStat(t *testing.T) {
	out := []byte(`# started on Sun Nov 29 18:37:41 2026

<not supported>,,instructions:u,0,100.00,,
<not supported>,,cycles:u,0,100.00,,
86.62,msec,task-clock,86619948,100.00,0.993,CPUs utilized
8,,context-switches,86619948,100.00,92.357,/sec
0,,page-faults,86619948,100.00,646.502,/sec
<not counted>,,cache-misses,0,100.00,,
`)
	cs := parseStat(out)
	byName := map[string]Counter{}
	for _, c := range cs {
		byName[c.Name] = c
	}
	if c := byName["instructions"]; c.Supported || c.Value != nil {
		t.Errorf("instructions %+v: unsupported must have no value", c)
	}
	if c := byName["task-clock"]; c.Value == nil || *c.Value != 86.62 || c.Unit != "msec" {
		t.Errorf("task-clock %+v", c)
	}
	if c := byName["page-faults"]; c.Value == nil || *c.Value != 0 {
		t.Errorf("page-faults %+v: a counted zero is a value", c)
	}
	if c := byName["cache-misses"]; !c.Supported || c.Value != nil {
		t.Errorf("cache-misses %+v", c)
	}
	if c := byName["ipc"]; c.Supported || c.Value != nil {
		t.Errorf("ipc %+v without instructions and cycles", c)
	}
	if _, ok := byName["branch-misses"]; ok {
		t.Error("a counter perf did not print appeared")
	}
}

func TestDiff(t *testing.T) {
	a := &Entry{Event: "cpu-clock", Hotspots: []Hotspot{{Symbol: "heavy", FlatPct: 70, CumPct: 70}, {Symbol: "light", FlatPct: 30, CumPct: 30}, {Symbol: "steady", FlatPct: 1, CumPct: 1}}}
	a.ID = "a"
	b := &Entry{Event: "cpu-clock", Hotspots: []Hotspot{{Symbol: "light", FlatPct: 60, CumPct: 60}, {Symbol: "fast", FlatPct: 39, CumPct: 39}, {Symbol: "steady", FlatPct: 1.2, CumPct: 1.2}}}
	b.ID = "b"
	c := Diff(a, b)
	var got []string
	for _, m := range c.Moves {
		got = append(got, fmt.Sprintf("%s %s %+.0f", m.Symbol, m.Status, m.FlatDelta))
	}
	want := "heavy gone -70, fast new +39, light moved +30"
	if strings.Join(got, ", ") != want || c.TopA != "heavy" || c.TopB != "light" || !c.SameEvent {
		t.Errorf("moves %v top %s -> %s, want %s", got, c.TopA, c.TopB, want)
	}
}

// syntheticScript writes perf script text of n samples whose frames are real
// functions of a Go binary built from testdata/gowork, so the benchmark pays
// for symbol and DWARF lookups as a real conversion does.
func syntheticScript(tb testing.TB, n int) []byte {
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("go is not installed")
	}
	exe := filepath.Join(tb.TempDir(), "gowork")
	cmd := exec.Command("go", "build", "-o", exe, ".")
	cmd.Dir = filepath.Join("testdata", "gowork")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(exe)
	if err != nil {
		tb.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		tb.Fatal(err)
	}
	var funcs []elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 16 && strings.Contains(s.Name, ".") {
			funcs = append(funcs, s)
		}
		if len(funcs) == 400 {
			break
		}
	}
	// Real profiles revisit the same code: draw frames from a pool of call
	// sites, as a program with a few thousand hot addresses would.
	rng := rand.New(rand.NewSource(1))
	type site struct {
		s   elf.Symbol
		off uint64
	}
	pool := make([]site, 5000)
	for i := range pool {
		s := funcs[rng.Intn(len(funcs))]
		pool[i] = site{s, uint64(rng.Intn(int(s.Size)))}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "1/1 0.0: PERF_RECORD_MMAP2 1/1: [0x400000(0x%x) @ 0 fe:00 1 0]: r-xp %s\n", 64<<20, exe)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "1/1 %d.%06d: 500250 cpu-clock: \n", i/1000, i%1000)
		depth := 4 + rng.Intn(8)
		for d := 0; d < depth; d++ {
			st := pool[rng.Intn(len(pool))]
			ip := st.s.Value + st.off
			if d > 0 {
				ip -= 0x400000 // callchain entries are printed relative to the mapping
			}
			fmt.Fprintf(&b, "\t%16x %s+0x%x (%s)\n", ip, st.s.Name, st.off, exe)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

func TestConvertSyntheticResolvesLines(t *testing.T) {
	p, err := ConvertPerfScript(bytes.NewReader(syntheticScript(t, 200)), Paths{})
	if err != nil {
		t.Fatal(err)
	}
	withLine := 0
	for _, l := range p.Location {
		if l.Line[0].Line > 0 && strings.HasSuffix(l.Line[0].Function.Filename, ".go") {
			withLine++
		}
	}
	if withLine < len(p.Location)*9/10 {
		t.Errorf("only %d of %d locations have a Go source line", withLine, len(p.Location))
	}
}

// BenchmarkConvert100k converts 100,000 samples (4-11 frames each, drawn from
// 5,000 call sites of a Go binary) to pprof.
func BenchmarkConvert100k(b *testing.B) {
	text := syntheticScript(b, 100000)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ConvertPerfScript(bytes.NewReader(text), Paths{}); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzConvertPerfScript(f *testing.F) {
	f.Add([]byte("1/1 1.0: 100 cpu-clock:\n\t10 rec+0x0 ([unknown])\n\n"))
	f.Add([]byte("7/7 1.5: 10 cpu-clock:  55fb7e8cb19e heavy+0x1e (/tmp/pe/w)\n"))
	f.Add([]byte("1/1 0.0: PERF_RECORD_MMAP2 1/1: [0x400000(0x1000) @ 0 fe:00 1 0]: r-xp /nonexistent\n1/1 1: 5 e:\n\t400010 f+0x10 (/nonexistent)\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ConvertPerfScript(bytes.NewReader(data), Paths{})
		if err != nil {
			return
		}
		if _, _, err := Hotspots(p); err != nil && len(p.Sample) > 0 {
			var total int64
			for _, s := range p.Sample {
				total += s.Value[1]
			}
			if total > 0 {
				t.Fatalf("Hotspots failed on a profile with weight: %v", err)
			}
		}
	})
}

func TestSymbolName(t *testing.T) {
	for _, tc := range []struct{ sym, dso, want string }{
		{"_ZN3foo3barEi", "/x/a", "foo::bar"},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", "/x/a", "std::vector::push_back"},
		{"_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "/x/a", "core::ptr::drop_in_place"},
		{"_RNvCs1234_7mycrate3foo", "/x/a", "mycrate::foo"},
		{"main.heavy", "/x/a", "main.heavy"},
		{"[unknown]", "/usr/lib/libc.so.6", "[libc.so.6]"},
		{"[unknown]", "[unknown]", "[unknown]"},
	} {
		if got, _ := symbolName([]byte(tc.sym), tc.dso); got != tc.want {
			t.Errorf("symbolName(%q) = %q, want %q", tc.sym, got, tc.want)
		}
	}
}
