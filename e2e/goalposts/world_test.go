// Package goalposts performs, with the real hone binary against real
// repositories, the attacks of an optimizer that tries to choose the rules
// it is judged by: an older pin, a pin on a side branch, a proposal entry
// written by hand, weak isolation, and a gate that redraws the terminal.
package goalposts

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// world is a maintainer's repository whose main has grown through every
// configuration an attacker would like back, and the agent's shell in it.
type world struct {
	t      *testing.T
	hone   string
	dir    string // the repository (the agent works in it too)
	home   string
	marker string // a host path the patch's code writes when it runs
	env    []string
	// pins of main's history, oldest first, each with goalposts an agent
	// would prefer to the tip's; side is a commit of a merged branch.
	pins map[string]string
	side string
	tip  string
}

// tipToml is the maintainer's current hone.toml: two gates, a threshold,
// the full jail, no network.
const tipToml = `[bench]
pairs = 3
max_pairs = 3
threshold = 0.02

[targets.c]
path = "t"
pin = "main"
protect = ["testdata/**"]
build = "sh build.sh"

  [[targets.c.gates]]
  name = "golden"
  run = "$HONE_OUT/prog"
  equivalence = true

  [[targets.c.gates]]
  name = "unit"
  run = "sh testdata/unit.sh"

  [targets.c.bench]
  run = "$HONE_OUT/prog"
`

// loosened are the superseded configurations, in the order main had them.
var loosened = []struct{ name, toml string }{
	{"no unit gate", strings.Replace(tipToml, "  [[targets.c.gates]]\n  name = \"unit\"\n  run = \"sh testdata/unit.sh\"\n\n", "", 1)},
	{"a lower threshold", strings.Replace(tipToml, "threshold = 0.02", "threshold = 0.0001", 1)},
	{"weak isolation", "[sandbox]\nisolation = \"weak\"\n\n" + tipToml},
	{"network allowed", "[sandbox]\nnetwork = \"allow\"\n\n" + tipToml},
}

const progC = `#include <stdio.h>

#define REPS 4

static volatile unsigned long long steps = 300000;

static unsigned long long walk(unsigned long long n) {
	unsigned long long x = 1;
	for (unsigned long long i = 0; i < n; i++)
		x = (x * 6364136223846793005ULL + 1442695040888963407ULL) ^ (x >> 17);
	return x;
}

int main(int argc, char **argv) {
	if (argc > 1)
		return walk(3) == walk(3) ? 0 : 1;
	unsigned long long r = 0;
	for (int i = 0; i < REPS; i++)
		r += walk(steps);
	printf("%llu\n", r % 1000);
	return 0;
}
`

func newWorld(t *testing.T) *world {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("needs cc")
	}
	tmp := t.TempDir()
	w := &world{t: t, hone: e2e.Hone(t), dir: filepath.Join(tmp, "repo"), home: filepath.Join(tmp, "home"), marker: filepath.Join(tmp, "patch-code-ran"), pins: map[string]string{}}
	if err := os.MkdirAll(w.home, 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = []string{"PATH=" + filepath.Dir(w.hone) + ":" + os.Getenv("PATH"), "HOME=" + w.home, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "NO_COLOR=1", "TMPDIR=" + tmp,
		"GIT_AUTHOR_NAME=maintainer", "GIT_AUTHOR_EMAIL=m@hone.invalid", "GIT_COMMITTER_NAME=maintainer", "GIT_COMMITTER_EMAIL=m@hone.invalid"}
	if gocache := os.Getenv("GOCACHE"); gocache != "" {
		w.env = append(w.env, "GOCACHE="+gocache)
	}
	w.write(map[string]string{
		"t/prog.c":           progC,
		"t/build.sh":         "cc -O2 -o \"$HONE_OUT/prog\" prog.c\n",
		"t/testdata/unit.sh": "exec \"$HONE_OUT/prog\" selftest\n",
		"README.md":          "the maintainer's project\n",
		"hone.toml":          loosened[0].toml,
		".gitignore":         ".sema-worktrees/\n",
	})
	w.git("init", "-q", "-b", "main")
	for _, l := range loosened {
		w.write(map[string]string{"hone.toml": l.toml})
		w.commit(l.name)
		w.pins[l.name] = w.head()
	}
	w.write(map[string]string{"hone.toml": tipToml})
	w.commit("the current rules")
	w.git("switch", "-q", "-c", "side")
	w.write(map[string]string{"README.md": "a side branch\n"})
	w.commit("side work")
	w.side = w.head()
	w.git("switch", "-q", "main")
	w.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
	w.tip = w.head()
	return w
}

func (w *world) write(files map[string]string) {
	w.t.Helper()
	for p, body := range files {
		full := filepath.Join(w.dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *world) commit(msg string) {
	w.t.Helper()
	w.git("add", "-A")
	w.git("commit", "-q", "-m", msg)
}

func (w *world) head() string { return w.git("rev-parse", "HEAD") }

// run runs a command in the repository and returns stdout, stderr, exit.
func (w *world) run(extra []string, name string, args ...string) (string, string, int) {
	w.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = w.dir
	cmd.Env = append(append([]string{}, w.env...), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	case err != nil:
		w.t.Fatalf("%s %v: %v", name, args, err)
	}
	return stdout.String(), stderr.String(), 0
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	out, errOut, code := w.run(nil, "git", args...)
	if code != 0 {
		w.t.Fatalf("git %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return strings.TrimSpace(out)
}

func (w *world) mustHone(args ...string) string {
	w.t.Helper()
	out, errOut, code := w.run(nil, w.hone, args...)
	if code != 0 {
		w.t.Fatalf("hone %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// patchDiff is the attacker's patch: prog.c computing r as expr (REPS *
// walk(steps) is the same answer from one walk), and a build.sh that leaves
// the marker on the host when it runs anywhere but in the jail.
func (w *world) patchDiff(expr string) string {
	w.t.Helper()
	w.write(map[string]string{
		"t/prog.c":   strings.Replace(progC, "for (int i = 0; i < REPS; i++)\n\t\tr += walk(steps);", "r = "+expr+";", 1),
		"t/build.sh": "echo ran > " + w.marker + " 2>/dev/null\ncc -O2 -o \"$HONE_OUT/prog\" prog.c\n",
	})
	diff := w.git("diff")
	w.git("checkout", "-q", "--", "t")
	return diff + "\n"
}

// propose runs `hone patch propose` and returns its output and exit code.
func (w *world) propose(hypothesis, diff string) (string, string, int) {
	w.t.Helper()
	file := filepath.Join(w.home, "patch.diff")
	if err := os.WriteFile(file, []byte(diff), 0o644); err != nil {
		w.t.Fatal(err)
	}
	out, errOut, code := w.run(nil, w.hone, "patch", "propose", "c", "--hotspot", "walk", "--class", "1", "--hypothesis", hypothesis, "--file", file)
	return strings.TrimSpace(out), errOut, code
}

// proposeAt makes a proposal at pin the way an agent with a shell can: it
// moves its own clone's main back to pin, proposes, and moves main back to
// the tip. The ledger now holds a proposal at pin.
func (w *world) proposeAt(pin, hypothesis, diff string) string {
	w.t.Helper()
	tip := w.git("rev-parse", "refs/heads/main")
	w.git("update-ref", "refs/heads/main", pin)
	id, errOut, code := w.propose(hypothesis, diff)
	w.git("update-ref", "refs/heads/main", tip)
	if code != 0 {
		w.t.Fatalf("proposing at %s with main moved there: exit %d\n%s", pin, code, errOut)
	}
	return id
}

// entry is what these tests read of a verdict.
type entry struct {
	ID      string   `json:"id"`
	PatchID string   `json:"patch_id"`
	Pin     string   `json:"pin"`
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason"`
	Summary string   `json:"summary"`
	Detail  string   `json:"detail"`
	Flags   []string `json:"flags"`
	Started string   `json:"started"`
	Gates   []struct {
		Name string `json:"name"`
	} `json:"gates"`
	Bench *json.RawMessage `json:"bench"`
}

func (w *world) verdict(id string) entry {
	w.t.Helper()
	var e entry
	if err := json.Unmarshal([]byte(w.mustHone("verdict", "--json", id)), &e); err != nil {
		w.t.Fatal(err)
	}
	return e
}

// nothingRan checks that a verdict was recorded without running any code of
// the patch: no build, gate or bench result, no started entry in the
// ledger, and no marker on the host.
func (w *world) nothingRan(e entry, reason string) {
	w.t.Helper()
	if e.Verdict != "error" || e.Reason != reason || len(e.Gates) != 0 || e.Bench != nil || e.Started != "" {
		w.t.Errorf("patch %s: %s (%s), %d gates, started %q: %s", e.PatchID, e.Verdict, e.Reason, len(e.Gates), e.Started, e.Detail)
	}
	if reason == "stale-pin" && !hasFlag(e.Flags, "stale-pin") {
		w.t.Errorf("patch %s: flags %v lack stale-pin", e.PatchID, e.Flags)
	}
	out := w.mustHone("ledger", "list", "--kind", "started", "--patch", e.PatchID, "--json")
	if o := strings.TrimSpace(out); o != "[]" && o != "null" {
		w.t.Errorf("patch %s was started:\n%s", e.PatchID, out)
	}
	if _, err := os.Stat(w.marker); err == nil {
		w.t.Errorf("the patch's code ran on the host: %s exists", w.marker)
	}
}

func hasFlag(flags []string, f string) bool {
	for _, g := range flags {
		if g == f {
			return true
		}
	}
	return false
}
