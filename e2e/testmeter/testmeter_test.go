// Package testmeter proves the test builds' work meter both ways: a test
// build decides by the work a run declares, the same on any machine, and
// says so in the entry; a release build refuses every entry it made, in
// `hone ledger verify` and in the server's hook, so a verdict no clock
// measured is never taken for one.
package testmeter

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

func TestMain(m *testing.M) { e2e.Main(m) }

const honeToml = `[bench]
pairs = 4
max_pairs = 8
# one code layout: the subject is the meter, not the layout
layouts = 1

[targets.c]
build = "cc -O1 -o $HONE_OUT/prog prog.c"

  [[targets.c.gates]]
  name = "golden"
  run = "$HONE_OUT/prog {seed}"
  equivalence = true

  [targets.c.bench]
  run = "$HONE_OUT/prog {seed}"
`

// prog walks REPS times over an input made from the seed and declares the
// steps it walked: what the work meter measures.
const prog = `#include <stdio.h>
#include <stdlib.h>

#define REPS 4
#define STEPS 3000000ULL

static unsigned long long work;

static unsigned long long walk(unsigned long long x) {
	for (unsigned long long i = 0; i < STEPS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	work += STEPS;
	return x;
}

int main(int argc, char **argv) {
	unsigned long long seed = argc > 1 ? strtoull(argv[1], 0, 10) : 0, r = 0;
	for (int k = 0; k < REPS; k++)
		r = walk(seed);
	printf("%llu\n", r);
	fprintf(stderr, "hone-work: %llu\n", work);
	return 0;
}
`

type workspace struct {
	t    *testing.T
	dir  string
	hone string
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	for _, tool := range []string{"cc", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed; run scripts/ci-deps.sh", tool)
		}
	}
	w := &workspace{t: t, dir: t.TempDir(), hone: e2e.Hone(t)}
	w.write("hone.toml", honeToml)
	w.write("targets/c/prog.c", prog)
	w.run(w.dir, "git", "init", "-q", "-b", "main")
	w.run(w.dir, "git", "add", "-A")
	w.run(w.dir, "git", "commit", "-q", "-m", "the pin")
	w.run(w.dir, w.hone, "init")
	return w
}

func (w *workspace) write(name, content string) {
	w.t.Helper()
	p := filepath.Join(w.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// exec runs a command in dir and returns its stdout, stderr and exit code.
func (w *workspace) exec(dir, name string, args ...string) (string, string, int) {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
		"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid", "GIT_CONFIG_NOSYSTEM=1", "NO_COLOR=1")
	// The work meter is what this package proves: never the measurement
	// tier's real one.
	cmd.Env = append(cmd.Env, "HONE_TIER=")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), code
}

func (w *workspace) run(dir, name string, args ...string) string {
	w.t.Helper()
	out, errOut, code := w.exec(dir, name, args...)
	if code != 0 {
		w.t.Fatalf("%s %s: exit %d\n%s%s", name, strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// judge proposes prog.c with old replaced by new and returns the verdict.
func (w *workspace) judge(hypothesis, old, new string) *verdict.Entry {
	w.t.Helper()
	changed := strings.Replace(prog, old, new, 1)
	if changed == prog {
		w.t.Fatalf("%q is not in the program", old)
	}
	w.write("targets/c/prog.c", changed)
	diff := w.run(w.dir, "git", "diff")
	w.run(w.dir, "git", "checkout", "--", ".")
	return w.judgeDiff(hypothesis, diff)
}

// judgeDiff proposes diff and returns its verdict.
func (w *workspace) judgeDiff(hypothesis, diff string) *verdict.Entry {
	w.t.Helper()
	w.write("patch.diff", diff)
	out := w.run(w.dir, w.hone, "patch", "propose", "c", "--hotspot", "walk", "--class", "5", "--hypothesis", hypothesis, "--file", "patch.diff", "--json")
	var p struct {
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		w.t.Fatalf("propose: %v\n%s", err, out)
	}
	var e verdict.Entry
	if out := w.run(w.dir, w.hone, "verdict", p.PatchID, "--json"); json.Unmarshal([]byte(out), &e) != nil {
		w.t.Fatalf("verdict: %s", out)
	}
	return &e
}

// A test build's verdict is the declared work's: four walks against one
// is (1e6 + 12e6) / (1e6 + 3e6) = 3.25 units exactly, in every pair, so
// the interval is that point and the decision comes at the same look on
// an idle machine and a loaded one alike (the second: at four pairs, four
// faster ones are not yet past the first look's level); a change that
// declares the same work is no change at all. Both entries say they were
// measured so.
func TestTestBuildDecidesByDeclaredWork(t *testing.T) {
	w := newWorkspace(t)
	fast := w.judge("one walk is enough", "#define REPS 4", "#define REPS 1")
	st := fast.Bench.Stat(fast.Bench.Metric)
	if fast.Verdict != ledger.VerdictAccepted || st == nil || st.CILow != 3.25 || st.CIHigh != 3.25 || fast.Bench.Pairs != 8 {
		t.Fatalf("one walk of four: %s at %+v over %d pairs; want accepted at exactly 3.25 after 8 pairs", fast.Verdict, st, fast.Bench.Pairs)
	}
	same := w.judge("a variable changes nothing", "static unsigned long long work;", "static unsigned long long work;\nstatic volatile int unused = 1;")
	if same.Verdict != ledger.VerdictRejectedBench || same.Speedup != 1 || same.Bench == nil {
		t.Fatalf("an unused variable: %s at %.3fx; want rejected-bench, measured at 1x", same.Verdict, same.Speedup)
	}
	for _, e := range []*verdict.Entry{fast, same} {
		if !e.HasFlag(ledger.FlagTestMeter) {
			t.Errorf("verdict %s lacks the %s flag: %v", e.ID, ledger.FlagTestMeter, e.Flags)
		}
	}
}

// A release build takes no verdict the work meter made: `ledger verify`
// reports the entry as malformed, and a server whose hook is a release
// hone refuses the ledger branch that carries it.
func TestReleaseBuildRefusesTheTestMetersVerdicts(t *testing.T) {
	w := newWorkspace(t)
	e := w.judge("one walk is enough", "#define REPS 4", "#define REPS 1")
	release := e2e.ReleaseHone(t)

	out, errOut, code := w.exec(w.dir, release, "ledger", "verify")
	if code == 0 || !strings.Contains(out+errOut, "test meter") || !strings.Contains(out+errOut, e.ID) {
		t.Errorf("release ledger verify: exit %d\n%s%s\nwant a failure naming entry %s and the test meter", code, out, errOut, e.ID)
	}
	if _, _, code := w.exec(w.dir, w.hone, "ledger", "verify"); code != 0 {
		t.Errorf("the test build's own ledger verify failed (exit %d): it made the entry", code)
	}

	server := filepath.Join(t.TempDir(), "server.git")
	w.run(w.dir, "git", "init", "-q", "--bare", "-b", "main", server)
	w.run(w.dir, "git", "push", "-q", server, "main")
	w.run(server, release, "hooks", "install", "--server")
	// Everything hone ledger push would send, so that the entry is the
	// one thing the hook can object to.
	out, errOut, code = w.exec(w.dir, "git", "push", "--atomic", server, "hone/ledger", "refs/hone/patches/*:refs/hone/patches/*", "refs/notes/hone")
	if code == 0 || !strings.Contains(errOut, "test meter") {
		t.Errorf("a push of the ledger branch to a release hone's server: exit %d\n%s%s\nwant it refused, naming the test meter", code, out, errOut)
	}
}

// The release script cannot make a test build.
func TestReleaseScriptRefusesTheTestMeterTag(t *testing.T) {
	root := moduleRoot(t)
	cmd := exec.Command("sh", "scripts/build.sh", filepath.Join(t.TempDir(), "hone"), "-tags", "hone_testmeter")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "hone_testmeter") {
		t.Errorf("scripts/build.sh -tags hone_testmeter: %v\n%s\nwant exit 2 naming the tag", err, out)
	}
	cmd = exec.Command("sh", "scripts/build.sh", filepath.Join(t.TempDir(), "hone"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=-tags=hone_testmeter")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("scripts/build.sh with GOFLAGS=-tags=hone_testmeter built a release:\n%s", out)
	}
}

// moduleRoot is the module's root folder.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// A candidate whose build is the baseline's, byte for byte, from a change
// to compiled source alone runs the very same programs: it is no change,
// judged without layouts or a bench. A change the bench could read
// directly (here a file beside the program) is always measured.
func TestIdenticalBuildIsNoChangeWithoutMeasuring(t *testing.T) {
	w := newWorkspace(t)
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
