// Package harness holds the end-to-end attacks on hone's go harness bench:
// a tiny Go module in a temporary repository, patches an optimizer would
// write to game its benchmarks, each judged by a real `hone verdict` in
// the jail.
package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/e2e/gowarm"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/verdict"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// module reads the target's Go module at the pin from testdata/module:
// two deciding benchmarks, BenchmarkBig about twenty times the cost of
// BenchmarkSmall, each with a checksum output, and a unit test as the gate.
// The test binary declares the rounds it folded (hone-work), so that under
// the test build's work meter a patch's runs cost the work they did: a
// loop whose work is gone does not scale there either.
// scripts/harness-crosscheck.sh uses the same module.
func module(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range []string{"go.mod", "work.go", "work_test.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "module", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	return files
}

// config is the workspace's hone.toml: the test binary built once per
// side, the unit test as the gate, both benchmarks deciding. A 10%
// threshold, and pairs enough for a loop's marginal cost on a machine
// another test package shares (go test -p 2): there a run's CPU time moves
// by a third, and the difference of two runs more. One look at eight
// pairs: at four no signed-rank test can decide (its least p is 1/8), and
// the honest gain, 1.44x [1.39, 1.49] over twelve pairs under two hogs,
// is decided at eight as surely, for two thirds of the machine's turn.
// With the real meter a second look at maxPairs (16) gives a benchmark
// that eight pairs left undecided twice the pairs before its estimate
// counts: an unchanged Small read 0.993x [0.909, 1.157] at eight under a
// load of 17, its estimate within one standard error of "may have
// regressed". Under the work meter eight pairs decide everything.
//
// One layout: these cases' subject is the harness (its counts, its loop,
// what an agent's harness may do to them), not code layout, and layouts
// would only add a candidate link per layout to each verdict. A harness
// bench judged in four layouts is e2e/goharness's (a real module, whose
// comment-only change is where layout matters).
//
// Runs of up to the default half a second (max_loop): at 100 ms, under two
// hogs, a run's start-up grew to tens of milliseconds, BenchmarkSmall's
// loop shrank to a fifth of a second's (24 ms), and its marginal cost
// drowned: the honest gain read as "may have regressed" and the 30%
// regression beside Big's gain was accepted (Small 1.177x [0.791, 2.980]).
// These cases' decisions rest on Small's marginal cost.
func config(goroot string, maxPairs int) string {
	ro := ""
	if !strings.HasPrefix(goroot, "/usr/") {
		ro = "[sandbox]\nread_only = [" + quote(goroot) + "]\n\n"
	}
	return ro + `[bench]
pairs     = 8
max_pairs = ` + strconv.Itoa(maxPairs) + `
threshold = 0.1
layouts   = 1
` + moduleTarget("m", goroot, "^Benchmark(Big|Small)$") + `
# The same module, judged by its seeded benchmark alone.` + moduleTarget("ms", goroot, "^BenchmarkSeeded$")
}

// moduleTarget is a target of the module m whose bench runs the
// benchmarks that match bench.
func moduleTarget(name, goroot, bench string) string {
	return `
[targets.` + name + `]
path    = "m"
pin     = "main"
protect = ["**/*_test.go", "go.mod"]
files   = ["*.go"]
build   = "PATH=` + goroot + `/bin:$PATH go test -c -o $HONE_OUT/bench.test ."

[[targets.` + name + `.gates]]
name = "unit"
run  = "$HONE_OUT/bench.test -test.run=. -test.count=1"

[targets.` + name + `.bench]
format  = "go"
run     = "$HONE_OUT/bench.test -test.run='^$' -test.bench='` + bench + `' -test.benchtime=200x"
outputs = ["checksum"]
`
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// workspace is a repository holding the module, with hone initialised.
// Its cases are judged side by side: tree guards the working tree, which
// each one's patch is written in and taken back from.
type workspace struct {
	t                     *testing.T
	hone, repo, home, tmp string
	tree                  *sync.Mutex
}

func newWorkspace(t *testing.T, maxPairs int) *workspace {
	t.Helper()
	if testing.Short() {
		t.Skip("judges real patches in the jail: skipped under -short")
	}
	tier.Need(t, "go", "bwrap", "git")
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	w := &workspace{t: t, hone: e2e.Hone(t), repo: filepath.Join(base, "repo"), home: filepath.Join(base, "home"), tmp: filepath.Join(base, "tmp"), tree: &sync.Mutex{}}
	for _, d := range []string{w.home, w.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"hone.toml": config(strings.TrimSpace(string(goroot)), maxPairs)}
	for name, content := range module(t) {
		files[filepath.Join("m", name)] = content
	}
	w.write(files)
	w.git("init", "-q", "-b", "main")
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "the module")
	w.run("init")
	// The attacks are on the harness, not on a cold build: the standard
	// library comes warm (gowarm), the module itself is built cold.
	gowarm.SeedT(t, filepath.Join(w.repo, ".git"))
	w.buildPin()
	return w
}

// buildPin builds the pin as a verdict's baseline (gowarm.BuildPin),
// which leaves it in the repository's build cache: the cases, judged side
// by side, then each find it there instead of all building it at once.
// Each candidate is still built cold, on the pin's trusted Go cache, as it
// would be after any earlier verdict of the pin.
func (w *workspace) buildPin() {
	w.t.Helper()
	if _, err := gowarm.BuildPin(context.Background(), w.repo, "m", "main"); err != nil {
		w.t.Fatalf("building the pin: %v", err)
	}
}

func (w *workspace) write(files map[string]string) {
	w.t.Helper()
	for name, content := range files {
		p := filepath.Join(w.repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *workspace) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = w.repo
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "TMPDIR=" + w.tmp, "LANG=C", "NO_COLOR=1",
		"GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
		"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid", "GIT_CONFIG_NOSYSTEM=1",
		tier.Env + "=" + os.Getenv(tier.Env),
	}
	return cmd
}

func (w *workspace) git(args ...string) string {
	w.t.Helper()
	return w.exec("git", args...)
}

func (w *workspace) run(args ...string) string {
	w.t.Helper()
	return w.exec(w.hone, args...)
}

func (w *workspace) exec(name string, args ...string) string {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := w.command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// judge proposes work.go replaced by src, judges it with hone verdict,
// and checks that the judging left the repository as it was: the working
// tree's status and main as they were.
func (w *workspace) judge(hypothesis, src string) *verdict.Entry {
	w.t.Helper()
	return w.judgeOn("m", hypothesis, src)
}

// judgeOn is judge for target.
func (w *workspace) judgeOn(target, hypothesis, src string) *verdict.Entry {
	w.t.Helper()
	// The patch is written into the working tree and taken back under the
	// lock: the cases judged beside this one see the pin's tree.
	var mainBefore, statusBefore, out string
	func() {
		w.tree.Lock()
		defer w.tree.Unlock()
		mainBefore, statusBefore = w.git("rev-parse", "main"), w.git("status", "--porcelain")
		w.write(map[string]string{"m/work.go": src})
		diff := w.git("diff") + "\n"
		w.git("checkout", "-q", "--", ".")
		file := filepath.Join(w.t.TempDir(), "patch.diff")
		if err := os.WriteFile(file, []byte(diff), 0o644); err != nil {
			w.t.Fatal(err)
		}
		out = w.run("patch", "propose", target, "--hotspot", "fold", "--class", "1", "--hypothesis", hypothesis, "--file", file, "--json")
	}()
	var p struct {
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.PatchID == "" {
		w.t.Fatalf("propose: %v\n%s", err, out)
	}
	out = w.run("verdict", p.PatchID, "--json")
	var e verdict.Entry
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		w.t.Fatalf("verdict JSON: %v\n%s", err, out)
	}
	w.t.Logf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	for _, g := range e.Gates {
		if g.Candidate != nil {
			w.t.Logf("  gate %s: candidate %.1fs", g.Name, g.Candidate.WallSeconds)
		}
	}
	if e.Bench != nil {
		w.t.Logf("  bench %.1fs, commands %.1fs, %d pairs", e.Bench.Seconds, e.Bench.CommandSeconds, e.Bench.Pairs)
		for _, r := range e.Bench.Benchmarks {
			w.t.Logf("  %s counts %v scaling %.2f/%.2f speedup %.3f [%.3f, %.3f] %s", r.Name, r.Counts, r.BaselineScaling, r.CandidateScaling, r.CPUStats.Speedup, r.CPUStats.CILow, r.CPUStats.CIHigh, r.Decision)
		}
	}
	w.tree.Lock()
	defer w.tree.Unlock()
	if st := w.git("status", "--porcelain"); st != statusBefore || w.git("rev-parse", "main") != mainBefore {
		w.t.Errorf("judging changed the repository: status %q", st)
	}
	return &e
}

// edit returns the pin's work.go with each old string replaced by its new one.
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	src := module(t)["work.go"]
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			t.Fatalf("work.go holds no %q", pairs[i])
		}
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	return src
}
