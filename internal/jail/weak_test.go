package jail

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/internal/tier"
)

// Weak isolation runs the same meter on the host: jail paths in the Spec
// become host paths, a Copy mount becomes a per-run copy, and HOME and
// TMPDIR are fresh for every run.
func TestWeakIsolationTranslatesJailPaths(t *testing.T) {
	tier.Jail(t)
	tree := t.TempDir()
	writeFile(t, tree, "input", "from the host\n", 0o644)
	out := t.TempDir()
	spec := Spec{
		Isolation: "weak",
		Dir:       "/work",
		Env:       []string{"HONE_ROOT=/work", "HONE_OUT=/out"},
		Mounts:    []Mount{{Host: tree, Jail: "/work", Mode: Copy}, {Host: out, Jail: "/out", Mode: ReadWrite}},
		Command:   `cat input && echo changed > input && echo built > "$HONE_OUT/bin" && ls -A "$HOME" "$TMPDIR" && touch "$HOME/m" && pwd`,
	}
	res := run(t, spec)
	if res.Isolation == "full" || res.Isolation == "" {
		t.Errorf("isolation %q", res.Isolation)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout.Bytes())), "\n")
	if len(lines) < 2 || lines[0] != "from the host" || strings.HasPrefix(lines[len(lines)-1], tree) || lines[len(lines)-1] == "/work" {
		t.Errorf("output:\n%s%s", res.Stdout.Bytes(), res.Stderr.Bytes())
	}
	if b, _ := os.ReadFile(filepath.Join(tree, "input")); string(b) != "from the host\n" {
		t.Errorf("the copy wrote through to the host: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "bin")); string(b) != "built\n" {
		t.Errorf("the read-write mount got %q", b)
	}
	if second := run(t, spec); strings.Contains(string(second.Stdout.Bytes()), "\nm\n") {
		t.Errorf("the second run found the first one's HOME:\n%s", second.Stdout.Bytes())
	}
}

func TestWeakIsolationStillKillsAndCharges(t *testing.T) {
	tier.Jail(t)
	marker := "hone-weak-" + strconv.Itoa(os.Getpid())
	res := run(t, Spec{Isolation: "weak", Command: "setsid sh -c 'sleep 1000 # " + marker + "' & i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"})
	if !res.Success() || res.Leftover < 1 || res.CPU() < time.Millisecond {
		t.Errorf("%s, leftover %d, cpu %v", res.Describe(), res.Leftover, res.CPU())
	}
	if n := testproc.Count(t, marker); n != 0 {
		t.Errorf("%d processes left by a weak run", n)
	}
}

func TestWeakIsolationTimesOut(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Isolation: "weak", Command: "sleep 100", Timeout: 300 * time.Millisecond})
	if !res.TimedOut || res.Success() {
		t.Errorf("want a timeout, got %s", res.Describe())
	}
}
