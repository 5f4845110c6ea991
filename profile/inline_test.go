package profile

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/hone-perf/hone/internal/tier"
)

// recordC compiles testdata/name.c with cc -O2 -g, runs it with args under
// perf record -g and converts perf script's output. It returns the source,
// the profile and the path of the profile written as a pprof file.
func recordC(t *testing.T, name string, args ...string) (string, *profile.Profile, string) {
	t.Helper()
	tier.Need(t, "perf", "cc")
	dir := t.TempDir()
	src := readTestdata(t, name+".c")
	if err := os.WriteFile(filepath.Join(dir, name+".c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return out
	}
	run("cc", "-O2", "-g", "-o", name, name+".c")
	run("perf", append([]string{"record", "-q", "-N", "-g", "-e", "cpu-clock", "-F", "1999", "-o", "perf.data", "./" + name}, args...)...)
	out := run("perf", "script", "-i", "perf.data", "-F", ScriptFields, "--no-demangle", "--no-inline", "--show-mmap-events")
	p, err := ConvertPerfScript(bytes.NewReader(out), Paths{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "profile.pb.gz")
	var gz bytes.Buffer
	if err := p.Write(&gz); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return src, p, file
}

// TestInlineFrames records a C program whose hot code is a function inlined
// into its caller, and checks that the profile names both: the inlined
// function at its own line, the caller at the line of the call.
func TestInlineFrames(t *testing.T) {
	src, p, _ := recordC(t, "inline", "100000000")
	hs, _, err := Hotspots(p)
	if err != nil {
		t.Fatal(err)
	}
	if hs[0].Symbol != "mix" || hs[0].File != "inline.c" || hs[0].Line != lineOf(t, src, "mix's line") || hs[0].FlatPct < 50 {
		t.Errorf("top hotspot %+v, want mix at inline.c:%d", hs[0], lineOf(t, src, "mix's line"))
	}
	if hs[0].InlinedInto != "spin" {
		t.Errorf("mix inlined into %q, want spin", hs[0].InlinedInto)
	}
	spin := hotspot(t, &Entry{Hotspots: hs}, "spin")
	if spin.CumPct < 90 || spin.Line != lineOf(t, src, "the call") {
		t.Errorf("spin %+v, want cum > 90%% at the call's line %d", spin, lineOf(t, src, "the call"))
	}
}

// TestHottestLineIsTheLoopNotTheSignature records a C program whose hot
// loop is in a helper GCC inlines into its caller and, through partial
// inlining, into itself at its signature line (as it does cJSON's
// add_item_to_array). The hottest line must be the loop's, as `go tool
// pprof -lines` says on the same file, not the signature every stack holds.
func TestHottestLineIsTheLoopNotTheSignature(t *testing.T) {
	src, p, file := recordC(t, "append", "30000")
	hs, _, err := Hotspots(p)
	if err != nil {
		t.Fatal(err)
	}
	h := hs[0]
	test, step := lineOf(t, src, "the walk's test"), lineOf(t, src, "the walk's step")
	if h.Symbol != "push_back" || h.File != "append.c" || (h.Line != test && h.Line != step) {
		t.Errorf("top hotspot %+v, want push_back at append.c:%d or %d (the loop), not %d (the signature)", h, test, step, lineOf(t, src, "push_back's signature"))
	}
	if h.InlinedInto != "append_value" || h.Label() != "push_back (inlined into append_value)" {
		t.Errorf("push_back is labelled %q, want it inlined into append_value", h.Label())
	}
	t.Logf("agrees with go tool pprof -lines: %v", agreesWithPprofLines(t, hs, file, 5))
}
