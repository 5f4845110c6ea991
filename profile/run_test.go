package profile

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e/gowarm"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// newWorkspace makes a git repository holding files and hone.toml, commits
// it, and opens it as a workspace.
func newWorkspace(t *testing.T, honeToml string, files map[string]string) *workspace.Workspace {
	t.Helper()
	files["hone.toml"] = honeToml
	ws, err := workspace.Open(testgit.NewRepo(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineOf is the 1-based number of the first line of src containing marker.
func lineOf(t *testing.T, src, marker string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("no %q in source", marker)
	return 0
}

func hotspot(t *testing.T, e *Entry, sym string) Hotspot {
	t.Helper()
	for _, h := range e.Hotspots {
		if h.Symbol == sym {
			return h
		}
	}
	t.Fatalf("no hotspot %q in %+v", sym, e.Hotspots)
	return Hotspot{}
}

// cWorkspace is a workspace whose target c is testdata/twofuncs.c, built
// without frame pointers, with about a quarter second of work to profile.
func cWorkspace(t *testing.T) (ws *workspace.Workspace, src string) {
	t.Helper()
	src = readTestdata(t, "twofuncs.c")
	return newWorkspace(t, `
[targets.c]
build = "cc -O2 -g -fomit-frame-pointer -o $HONE_OUT/w w.c"

  [targets.c.bench]
  run = "$HONE_OUT/w 400000000"
`, map[string]string{"targets/c/w.c": src}), src
}

// TestRunC profiles a C program whose two functions cost about 70% and 30%,
// and checks the ranking, the source lines, the ledger round trip and that
// `go tool pprof` reads the same ranking and hottest lines from the pprof
// file. The two take turns, so heavy outranks light however busy the
// machine; how close the shares come to the work's is the measurement
// tier's (TestMeasureProfileSharesFollowTheWork).
func TestRunC(t *testing.T) {
	tier.Jail(t)
	tier.Need(t, "perf", "cc", "go")
	ws, src := cWorkspace(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "c.pb.gz")
	e, err := Run(ctx, ws, "c", Options{PprofOut: out})
	if err != nil {
		t.Fatal(err)
	}
	// The jail's user is unprivileged: at perf_event_paranoid 2 perf
	// samples user space only (":u").
	if ev := strings.TrimSuffix(e.Event, ":u"); e.Source != "perf" || (ev != "cpu-clock" && ev != "cycles") {
		t.Errorf("source %q event %q, want perf with cpu-clock or cycles", e.Source, e.Event)
	}
	if e.Samples < 200 {
		t.Errorf("only %d samples", e.Samples)
	}
	heavy, light := hotspot(t, e, "heavy"), hotspot(t, e, "light")
	t.Logf("%d samples: heavy %.1f%%, light %.1f%%", e.Samples, heavy.FlatPct, light.FlatPct)
	if e.Hotspots[0].Symbol != "heavy" || !(heavy.FlatPct > light.FlatPct) {
		t.Errorf("top hotspot %q, heavy %.1f%%, light %.1f%%; want heavy first", e.Hotspots[0].Symbol, heavy.FlatPct, light.FlatPct)
	}
	if heavy.File != "targets/c/w.c" || heavy.Line != lineOf(t, src, "heavy's hot line") {
		t.Errorf("heavy at %s:%d, want targets/c/w.c:%d", heavy.File, heavy.Line, lineOf(t, src, "heavy's hot line"))
	}
	if light.Line != lineOf(t, src, "light's hot line") {
		t.Errorf("light at line %d, want %d", light.Line, lineOf(t, src, "light's hot line"))
	}
	if e.Binary != "$HONE_OUT/w" || len(e.BinaryHash) != 64 {
		t.Errorf("binary %q hash %q", e.Binary, e.BinaryHash)
	}
	if c := counter(e, "task-clock"); c == nil || !c.Supported || c.Value == nil || *c.Value <= 0 {
		t.Errorf("task-clock counter %+v", c)
	}
	if c := counter(e, "instructions"); c == nil || (!c.Supported && c.Value != nil) {
		t.Errorf("instructions counter %+v: unsupported must have no value", c)
	}

	top := pprofTop(t, out)
	if len(top) < 2 || top[0] != "heavy" || top[1] != "light" {
		t.Errorf("go tool pprof -top ranks %v, want heavy, light first", top)
	}
	t.Logf("agrees with go tool pprof -lines: %v", agreesWithPprofLines(t, e.Hotspots, out, 5))

	latest, err := Latest(ctx, ws, "c")
	if err != nil {
		t.Fatal(err)
	}
	if latest.ID != e.ID || latest.Hotspots[0] != e.Hotspots[0] || latest.Event != e.Event || latest.Pin != e.Pin || latest.CallGraphReason != e.CallGraphReason {
		t.Errorf("latest %+v differs from the run's entry %+v", latest.Top(1), e.Top(1))
	}
	p, err := Pprof(ctx, ws, latest)
	if err != nil {
		t.Fatal(err)
	}
	if hs, _, err := Hotspots(p); err != nil || hs[0].Symbol != "heavy" || hs[0].FlatPct != e.Hotspots[0].FlatPct {
		t.Errorf("stored pprof gives %+v, %v", hs[:1], err)
	}
	back := filepath.Join(t.TempDir(), "back.pb.gz")
	if err := WritePprof(ctx, ws, latest, back); err != nil {
		t.Fatal(err)
	}
	if a, b := readFile(t, out), readFile(t, back); !bytes.Equal(a, b) {
		t.Errorf("the stored pprof written back (%d bytes) differs from the run's (%d bytes)", len(b), len(a))
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCodeWithoutFramePointersGetsRealCallers: -fomit-frame-pointer code
// leaves frame-pointer stacks at their leaf, so the profile records again
// with DWARF unwinding on its own and says why; code with frame pointers
// keeps them; and hone.toml's call_graph still forces a mode.
func TestCodeWithoutFramePointersGetsRealCallers(t *testing.T) {
	tier.Jail(t)
	tier.Need(t, "perf", "cc")
	cases := []struct {
		target, cflags, callGraph string // how hone.toml builds and profiles it
		mode, reason              string // what the profile must say it used and why
		callers                   bool   // main holds nearly all the time
	}{
		{"omit", "-fomit-frame-pointer", "", CallGraphDWARF, "frame pointers named the caller in only ", true},
		{"keep", "-fno-omit-frame-pointer", "", CallGraphFP, "frame pointers named the caller in ", false},
		{"forced", "-fomit-frame-pointer", CallGraphFP, CallGraphFP, "set by [targets.forced.profile] call_graph", false},
	}
	var conf strings.Builder
	for _, tc := range cases {
		fmt.Fprintf(&conf, "[targets.%s]\npath = \"targets/c\"\nbuild = \"cc -O2 -g %s -o $HONE_OUT/w w.c\"\n", tc.target, tc.cflags)
		fmt.Fprintf(&conf, "[targets.%s.bench]\nrun = \"$HONE_OUT/w 200000000\"\n", tc.target)
		if tc.callGraph != "" {
			fmt.Fprintf(&conf, "[targets.%s.profile]\ncall_graph = %q\n", tc.target, tc.callGraph)
		}
	}
	ws := newWorkspace(t, conf.String(), map[string]string{"targets/c/w.c": readTestdata(t, "twofuncs.c")})
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			var steps []string
			e, err := Run(ctx, ws, tc.target, Options{Progress: func(s string) { steps = append(steps, s) }})
			if err != nil {
				t.Fatal(err)
			}
			if e.CallGraph != tc.mode || !strings.HasPrefix(e.CallGraphReason, tc.reason) {
				t.Errorf("call graph %q (%s), want %q (%s...)", e.CallGraph, e.CallGraphReason, tc.mode, tc.reason)
			}
			if e.Hotspots[0].Symbol != "heavy" {
				t.Errorf("top hotspot %q, want heavy", e.Hotspots[0].Symbol)
			}
			again := slices.ContainsFunc(steps, func(s string) bool { return strings.Contains(s, "recording again with DWARF") })
			if again != (tc.mode == CallGraphDWARF) {
				t.Errorf("steps %q: a second recording is told exactly when DWARF is chosen", steps)
			}
			// With frame pointers, fp-less stacks stop at the leaf. Even
			// -fno-omit-frame-pointer stacks skip main: GCC gives the leaf,
			// heavy, no frame of its own, so unwinding starts from main's
			// frame and names libc's caller of main.
			m := hotspotOrZero(e, "main")
			if tc.callers && (m.CumPct < 90 || m.File != "targets/c/w.c") {
				t.Errorf("main %+v, want cum%% > 90 in targets/c/w.c: DWARF unwinding finds the real caller", m)
			}
			if tc.target == "forced" && m.CumPct > 50 {
				t.Errorf("main cum%% = %.2f with forced frame pointers; the test no longer shows why dwarf exists", m.CumPct)
			}
		})
	}
}

// TestPerfWithoutDWARFKeepsFramePointerStacks: a perf that refuses
// --call-graph=dwarf (built without an unwinder) must not cost the profile:
// the frame-pointer recording is kept, and the entry says why. The wrapper
// stands in for such a perf, which this machine does not have.
func TestPerfWithoutDWARFKeepsFramePointerStacks(t *testing.T) {
	tier.Jail(t)
	tier.Need(t, "perf", "cc")
	real, _ := exec.LookPath("perf")
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = --call-graph=dwarf ]; then echo 'this perf has no DWARF unwinding' >&2; exit 1; fi\ndone\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "perf"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	// A perf outside the system folders must be shown to the jail.
	ws := newWorkspace(t, `
[sandbox]
read_only = ["`+bin+`"]

[targets.c]
build = "cc -O2 -g -fomit-frame-pointer -o $HONE_OUT/w w.c"

  [targets.c.bench]
  run = "$HONE_OUT/w 200000000"
`, map[string]string{"targets/c/w.c": readTestdata(t, "twofuncs.c")})
	e, err := Run(context.Background(), ws, "c", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.CallGraph != CallGraphFP || !strings.Contains(e.CallGraphReason, "this perf cannot record with DWARF unwinding") || !strings.Contains(e.CallGraphReason, "this perf has no DWARF unwinding") {
		t.Errorf("call graph %q (%s), want fp with the DWARF failure named", e.CallGraph, e.CallGraphReason)
	}
	if e.Hotspots[0].Symbol != "heavy" {
		t.Errorf("top hotspot %q, want heavy", e.Hotspots[0].Symbol)
	}
}

func hotspotOrZero(e *Entry, sym string) Hotspot {
	for _, h := range e.Hotspots {
		if h.Symbol == sym {
			return h
		}
	}
	return Hotspot{}
}

func counter(e *Entry, name string) *Counter {
	for i := range e.Counters {
		if e.Counters[i].Name == name {
			return &e.Counters[i]
		}
	}
	return nil
}

// goWorkspace is a workspace whose targets gp and gperf are
// testdata/gowork, doing n steps of work: gp profiled from the pprof file
// it writes itself (format = "pprof"), gperf under perf.
func goWorkspace(t *testing.T, n string) (ws *workspace.Workspace, src string) {
	t.Helper()
	src = readTestdata(t, "gowork/main.go")
	ws = newWorkspace(t, `
[targets.gp]
path  = "targets/go"
build = "go build -o $HONE_OUT/gowork ."

  [targets.gp.bench]
  run = "$HONE_OUT/gowork `+n+`"

  [targets.gp.profile]
  run    = "$HONE_OUT/gowork `+n+` $HONE_OUT/cpu.pprof"
  format = "pprof"
  output = "$HONE_OUT/cpu.pprof"

[targets.gperf]
path  = "targets/go"
build = "go build -o $HONE_OUT/gowork ."

  [targets.gperf.bench]
  run = "$HONE_OUT/gowork `+n+`"
`, map[string]string{"targets/go/main.go": src, "targets/go/go.mod": readTestdata(t, "gowork/go.mod")})
	// The profiles are the subject, not a cold build of the standard library.
	gowarm.SeedT(t, filepath.Join(ws.Root, ".git"))
	return ws, src
}

// TestRunGo profiles the same Go program twice: from the pprof file it writes
// itself (format = "pprof") and under perf, whose frame-pointer callchains
// also give inclusive shares. Its assertions hold on a busy machine: heavy
// and light take turns, so heavy outranks light whatever the load; how
// close the shares come to the work's is the measurement tier's
// (TestMeasureProfileSharesFollowTheWork).
func TestRunGo(t *testing.T) {
	tier.Jail(t)
	tier.Need(t, "perf", "go")
	ws, src := goWorkspace(t, "600000000")
	ctx := context.Background()
	for _, target := range []string{"gp", "gperf"} {
		t.Run(target, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), target+".pb.gz")
			e, err := Run(ctx, ws, target, Options{PprofOut: out})
			if err != nil {
				t.Fatal(err)
			}
			heavy, light := hotspot(t, e, "main.heavy"), hotspot(t, e, "main.light")
			// On a loaded machine the runtime takes its own share, and a
			// sample can land in runtime.asyncPreempt, which sysmon injects
			// into a long-running loop: that code runs on heavy's stack, so
			// the check uses inclusive shares, which it cannot move.
			t.Logf("%d samples: main.heavy cum %.1f%%, main.light cum %.1f%%", e.Samples, heavy.CumPct, light.CumPct)
			if heavy.CumPct <= light.CumPct {
				t.Errorf("main.heavy cum%% %.2f, main.light %.2f: want heavy above light (hotspots %+v)", heavy.CumPct, light.CumPct, e.Hotspots[:min(5, len(e.Hotspots))])
			}
			// gofmt puts the loop on two lines; the compiler decides which
			// of them the loop's instructions belong to.
			loop, body := lineOf(t, src, "heavy's loop"), lineOf(t, src, "heavy's body")
			if heavy.File != "targets/go/main.go" || (heavy.Line != loop && heavy.Line != body) {
				t.Errorf("main.heavy at %s:%d, want targets/go/main.go:%d or %d", heavy.File, heavy.Line, loop, body)
			}
			t.Logf("agrees with go tool pprof -lines: %v", agreesWithPprofLines(t, e.Hotspots, out, 5))
			// perf's frame-pointer unwinding skips the caller of a
			// frameless leaf (main.main here), so check runtime.main. Go
			// keeps frame pointers, so no DWARF recording was needed.
			outer := map[string]string{"gp": "main.main", "gperf": "runtime.main"}[target]
			if h := hotspot(t, e, outer); h.CumPct < 80 {
				t.Errorf("%s cum%% = %.2f, want > 80", outer, h.CumPct)
			}
			if target == "gperf" && e.CallGraph != CallGraphFP {
				t.Errorf("call graph %q (%s), want fp: Go code has frame pointers", e.CallGraph, e.CallGraphReason)
			}
		})
	}
	es, err := List(ctx, ws, "gp")
	if err != nil || len(es) != 1 || es[0].Source != "pprof" || es[0].Kind != ledger.KindProfile {
		t.Errorf("List(gp) = %d entries, %v", len(es), err)
	}
}

// The measurement tier's half of TestRunC and TestRunGo: the shares a
// profile gives heavy and light are the work's, 70% and 30%, within 8
// points, for C under perf and for Go from its own pprof file and under
// perf.
func TestMeasureProfileSharesFollowTheWork(t *testing.T) {
	tier.Measure(t, "heavy and light run the same loop 7:3 times, taking turns in 100 rounds of a few milliseconds, "+
		"so on an idle machine a share misses the work's only by sampling error: the C program's quarter second "+
		"of CPU at 1999 Hz and the Go program's two seconds (its own profile keeps about 250 ticks a second) give "+
		"hundreds of samples (the test fails below 200), "+
		"where one standard error of a 70% share is at most 3.2 points (sqrt(0.7*0.3/200)) and 1.7 at 700 samples; "+
		"8 points is 2.5 of them at the floor and over 4.5 at the counts these programs give, and the turns keep "+
		"the machine's drift out of the shares; the Go runtime's own share on an idle machine is a few per cent, "+
		"where heavy's inclusive share would fall below 50 only if it took over a quarter")
	tier.Need(t, "perf", "cc", "go")
	ctx := context.Background()
	check := func(t *testing.T, e *Entry, heavy, light float64) {
		t.Helper()
		t.Logf("%d samples: heavy %.1f%%, light %.1f%%", e.Samples, heavy, light)
		if e.Samples < 200 {
			t.Fatalf("only %d samples: too few to hold a share to 8 points", e.Samples)
		}
		share := 100 * heavy / (heavy + light)
		if math.Abs(share-70) > 8 {
			t.Errorf("heavy is %.1f%% of heavy+light, want 70 ± 8 (hotspots %+v)", share, e.Hotspots[:min(5, len(e.Hotspots))])
		}
	}
	t.Run("c", func(t *testing.T) {
		ws, _ := cWorkspace(t)
		e, err := Run(ctx, ws, "c", Options{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, e, hotspot(t, e, "heavy").FlatPct, hotspot(t, e, "light").FlatPct)
	})
	// Go's own profile keeps about a quarter of its 1000 Hz ticks (a
	// hundred samples in the 0.4 s TestRunGo profiles): five times the
	// work gives it the samples the bound needs.
	ws, _ := goWorkspace(t, "3000000000")
	for _, target := range []string{"gp", "gperf"} {
		t.Run(target, func(t *testing.T) {
			e, err := Run(ctx, ws, target, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Inclusive shares, which runtime.asyncPreempt on heavy's
			// stack cannot move (TestRunGo).
			heavy, light := hotspot(t, e, "main.heavy"), hotspot(t, e, "main.light")
			if heavy.CumPct < 50 {
				t.Errorf("main.heavy cum%% %.2f, want above 50", heavy.CumPct)
			}
			check(t, e, heavy.CumPct, light.CumPct)
		})
	}
}

func TestPerfMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := probePerf(context.Background())
	if err == nil || !strings.Contains(err.Error(), "apt-get install linux-perf") {
		t.Errorf("err = %v, want the package to install", err)
	}
}
