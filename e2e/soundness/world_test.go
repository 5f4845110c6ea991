// Package soundness proves that verdicts are sound both ways, end to end
// through the hone binary: a test build decides by the work a run declares
// and a release build refuses what it made; a patch is judged against the
// code it would land on; a candidate that is the baseline is no change.
package soundness

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
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

type world struct {
	t    *testing.T
	dir  string
	hone string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	for _, tool := range []string{"cc", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed; run scripts/ci-deps.sh", tool)
		}
	}
	w := &world{t: t, dir: t.TempDir(), hone: e2e.Hone(t)}
	w.write("hone.toml", honeToml)
	w.write("targets/c/prog.c", prog)
	w.run(w.dir, "git", "init", "-q", "-b", "main")
	w.run(w.dir, "git", "add", "-A")
	w.run(w.dir, "git", "commit", "-q", "-m", "the pin")
	w.run(w.dir, w.hone, "init")
	return w
}

func (w *world) write(name, content string) {
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
func (w *world) exec(dir, name string, args ...string) (string, string, int) {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := w.command(dir, name, args...)
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

// command is name with args in dir, with a git identity and, unless env
// says otherwise, the work meter: what this package proves is never the
// measurement tier's real meter.
func (w *world) command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
		"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid", "GIT_CONFIG_NOSYSTEM=1", "NO_COLOR=1",
		"HONE_TIER=")
	return cmd
}

func (w *world) run(dir, name string, args ...string) string {
	w.t.Helper()
	out, errOut, code := w.exec(dir, name, args...)
	if code != 0 {
		w.t.Fatalf("%s %s: exit %d\n%s%s", name, strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// judge proposes prog.c with old replaced by new and returns the verdict.
func (w *world) judge(hypothesis, old, new string) *verdict.Entry {
	w.t.Helper()
	return w.judgeDiff(hypothesis, w.diff(old, new))
}

// diff is a patch of the program in the working tree with old replaced by
// new, which it leaves as it was.
func (w *world) diff(old, new string) string {
	w.t.Helper()
	path := filepath.Join(w.dir, "targets", "c", "prog.c")
	was, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	changed := strings.Replace(string(was), old, new, 1)
	if changed == string(was) {
		w.t.Fatalf("%q is not in the program", old)
	}
	w.write("targets/c/prog.c", changed)
	diff := w.run(w.dir, "git", "diff")
	w.write("targets/c/prog.c", string(was))
	return diff
}

// judgeDiff proposes diff and returns its verdict.
func (w *world) judgeDiff(hypothesis, diff string) *verdict.Entry {
	w.t.Helper()
	return w.verdict(w.propose(hypothesis, diff))
}

// propose proposes diff and returns the patch id.
func (w *world) propose(hypothesis, diff string) string {
	w.t.Helper()
	w.write("patch.diff", diff)
	out := w.run(w.dir, w.hone, "patch", "propose", "c", "--hotspot", "walk", "--class", "5", "--hypothesis", hypothesis, "--file", "patch.diff", "--json")
	var p struct {
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		w.t.Fatalf("propose: %v\n%s", err, out)
	}
	return p.PatchID
}

// verdict judges a proposed patch.
func (w *world) verdict(id string) *verdict.Entry {
	w.t.Helper()
	var e verdict.Entry
	if out := w.run(w.dir, w.hone, "verdict", id, "--json"); json.Unmarshal([]byte(out), &e) != nil {
		w.t.Fatalf("verdict: %s", out)
	}
	return &e
}
