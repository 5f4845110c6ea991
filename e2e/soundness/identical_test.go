package soundness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// A candidate whose build is the baseline's, byte for byte, from a change
// to compiled source alone runs the very same programs: it is no change,
// judged without layouts or a bench. A change the bench could read
// directly (here a file beside the program) is always measured.
func TestIdenticalBuildIsNoChangeWithoutMeasuring(t *testing.T) {
	w := newWorld(t)
	comment := w.judge("a comment is free", "static unsigned long long work;", "static unsigned long long work; /* steps walked */")
	if comment.Verdict != ledger.VerdictRejectedBench || comment.Reason != verdict.ReasonNoChange || comment.Bench != nil ||
		!strings.Contains(comment.Detail, "byte-identical") {
		t.Fatalf("a comment: %s (%s), bench %v: %s; want rejected-bench (no-change) with nothing measured", comment.Verdict, comment.Reason, comment.Bench != nil, comment.Detail)
	}
	w.write("targets/c/notes.txt", "a file the bench could read\n")
	w.run(w.dir, "git", "add", "-N", "targets/c/notes.txt")
	diff := w.run(w.dir, "git", "diff")
	w.run(w.dir, "git", "rm", "-q", "--cached", "targets/c/notes.txt")
	os.Remove(filepath.Join(w.dir, "targets/c/notes.txt"))
	e := w.judgeDiff("a file beside the program", diff)
	if e.Bench == nil || e.Verdict != ledger.VerdictRejectedBench {
		t.Errorf("a new data file with identical build outputs: %s, bench %v; want it measured", e.Verdict, e.Bench != nil)
	}
}

// newInPlaceWorld is newWorld's program built as lz4 builds its own, in
// four layouts: by the Makefiles of e2e/layout/testdata/inplace, which
// compile and link in the checkout (targets/c/programs/prog, copied up to
// targets/c/prog, which the gate and the bench run) and leave $HONE_OUT
// as the build command leaves it.
func newInPlaceWorld(t *testing.T, build string) *world {
	w := newWorld(t)
	w.write("hone.toml", strings.NewReplacer("layouts = 1", "layouts = 4", `"cc -O1 -o $HONE_OUT/prog prog.c"`, strconv.Quote(build),
		"$HONE_OUT/prog", "./prog").Replace(honeToml))
	for _, name := range []string{"Makefile", "programs/Makefile"} {
		b, err := os.ReadFile(filepath.Join("..", "layout", "testdata", "inplace", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		w.write("targets/c/"+name, string(b))
	}
	w.run(w.dir, "git", "add", "-A")
	w.run(w.dir, "git", "commit", "-q", "-m", "built in place")
	return w
}

// A program built in the checkout, with nothing in $HONE_OUT, is judged by
// the whole built checkout: a comment leaves every object and program the
// pin's, byte for byte, so the verdict is no change at once, with no
// layout built and no pair run, and it names the programs it compared.
func TestAnInPlaceBuildIdenticalToThePinIsNoChangeWithoutLayouts(t *testing.T) {
	w := newInPlaceWorld(t, "make")
	id := w.propose("a comment is free", w.diff("static unsigned long long work;", "static unsigned long long work; /* steps walked */"))
	var e verdict.Entry
	if out := w.run(w.dir, w.hone, "verdict", id, "--json", "--keep"); json.Unmarshal([]byte(out), &e) != nil {
		t.Fatalf("verdict: %s", out)
	}
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != verdict.ReasonNoChange || e.Bench != nil ||
		!strings.Contains(e.Detail, "byte-identical") || !strings.Contains(e.Detail, "its programs targets/c/prog, targets/c/programs/prog") {
		t.Fatalf("a comment: %s (%s), bench %v: %s; want rejected-bench (no-change) naming the programs, nothing measured", e.Verdict, e.Reason, e.Bench != nil, e.Detail)
	}
	if len(e.KeptCheckouts) != 1 {
		t.Fatalf("kept %v", e.KeptCheckouts)
	}
	layouts, err := filepath.Glob(filepath.Join(e.KeptCheckouts[0], "*-layout-*"))
	if err != nil || len(layouts) != 0 {
		t.Errorf("layout builds %v (%v); want none", layouts, err)
	}
}

// The checkout counts as much as $HONE_OUT: a build whose $HONE_OUT is
// the same on both sides (a stamp) while the program it runs, in the
// checkout, is faster is measured, and its speedup accepted.
func TestAnInPlaceProgramThatChangedIsMeasuredWhateverHoneOutHolds(t *testing.T) {
	w := newInPlaceWorld(t, "make && echo built > $HONE_OUT/stamp")
	w.judgeFaster(t, "a faster program in the checkout")
}

// A bench that compiles the program itself reads the changed source, which
// no build product shows. A bench command that names a compiler is
// measured, whatever the build made (here a program of other source).
func TestABenchThatNamesACompilerIsMeasured(t *testing.T) {
	w := newWorld(t)
	w.write("targets/c/other.c", "int main(void) { return 0; }\n")
	w.write("hone.toml", strings.NewReplacer("prog.c\"", "other.c\"",
		`run = "$HONE_OUT/prog {seed}"`, `run = "cc -O1 -o /tmp/prog prog.c && /tmp/prog {seed}"`).Replace(honeToml))
	w.run(w.dir, "git", "add", "-A")
	w.run(w.dir, "git", "commit", "-q", "-m", "the bench compiles the program")
	w.judgeFaster(t, "a faster program compiled by the bench")
}

// A bench that builds what it runs behind a script names no compiler: a
// build that made no program (one committed beside the source is none of
// the build's) and nothing in $HONE_OUT leaves the candidate measured.
func TestABuildThatMakesNothingIsMeasured(t *testing.T) {
	w := newWorld(t)
	w.write("targets/c/bench.sh", "cc -O1 -o /tmp/prog prog.c && exec /tmp/prog \"$1\"\n")
	w.write("hone.toml", strings.NewReplacer(`"cc -O1 -o $HONE_OUT/prog prog.c"`, `"true"`, "$HONE_OUT/prog", "sh bench.sh").Replace(honeToml))
	w.run(filepath.Join(w.dir, "targets", "c"), "cc", "-o", "committed", "prog.c")
	w.run(w.dir, "git", "add", "-A")
	w.run(w.dir, "git", "commit", "-q", "-m", "a script compiles the program, a program committed")
	w.judgeFaster(t, "a faster program built by the bench's script")
}

// judgeFaster judges a program that walks its input three times, not
// four: the same output for less work, which must be measured and
// accepted.
func (w *world) judgeFaster(t *testing.T, what string) {
	t.Helper()
	e := w.judge("walk the input three times, not four", "#define REPS 4", "#define REPS 3")
	if e.Bench == nil || e.Verdict != ledger.VerdictAccepted {
		t.Fatalf("%s: %s (%s), bench %v: %s; want it measured and accepted", what, e.Verdict, e.Reason, e.Bench != nil, e.Detail)
	}
}
