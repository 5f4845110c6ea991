package profile

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestInlineFrames records a C program whose hot code is a function inlined
// into its caller, and checks that the profile names both: the inlined
// function at its own line, the caller at the line of the call.
func TestInlineFrames(t *testing.T) {
	need(t, "perf", "cc")
	dir := t.TempDir()
	src := readTestdata(t, "inline.c")
	if err := os.WriteFile(filepath.Join(dir, "inline.c"), []byte(src), 0o644); err != nil {
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
	run("cc", "-O2", "-g", "-o", "inline", "inline.c")
	run("perf", "record", "-q", "-N", "-g", "-e", "cpu-clock", "-F", "1999", "-o", "perf.data", "./inline", "100000000")
	out := run("perf", "script", "-i", "perf.data", "-F", ScriptFields, "--no-demangle", "--no-inline", "--show-mmap-events")
	p, err := ConvertPerfScript(bytes.NewReader(out), Paths{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	hs, _, err := Hotspots(p)
	if err != nil {
		t.Fatal(err)
	}
	if hs[0].Symbol != "mix" || hs[0].File != "inline.c" || hs[0].Line != lineOf(t, src, "mix's line") || hs[0].FlatPct < 50 {
		t.Errorf("top hotspot %+v, want mix at inline.c:%d", hs[0], lineOf(t, src, "mix's line"))
	}
	spin := hotspot(t, &Entry{Hotspots: hs}, "spin")
	if spin.CumPct < 90 || spin.Line != lineOf(t, src, "the call") {
		t.Errorf("spin %+v, want cum > 90%% at the call's line %d", spin, lineOf(t, src, "the call"))
	}
}
