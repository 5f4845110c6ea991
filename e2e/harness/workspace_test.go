// Package harness holds the end-to-end attacks on hone's go harness bench:
// a tiny Go module in a temporary repository, patches an optimizer would
// write to game its benchmarks, each judged by a real `hone verdict` in
// the jail.
package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/e2e/gowarm"
	"github.com/hone-perf/hone/verdict"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// module reads the target's Go module at the pin from testdata/module:
// two deciding benchmarks, BenchmarkBig about twenty times the cost of
// BenchmarkSmall, each with a checksum output, and a unit test as the gate.
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
func config(goroot string) string {
	ro := ""
	if !strings.HasPrefix(goroot, "/usr/") {
		ro = "[sandbox]\nread_only = [" + quote(goroot) + "]\n\n"
	}
	return ro + `[bench]
pairs     = 8
max_pairs = 8
threshold = 0.1

[targets.m]
path    = "m"
pin     = "main"
protect = ["**/*_test.go", "go.mod"]
files   = ["*.go"]
build   = "PATH=` + goroot + `/bin:$PATH go test -c -o $HONE_OUT/bench.test ."

[[targets.m.gates]]
name = "unit"
run  = "$HONE_OUT/bench.test -test.run=. -test.count=1"

[targets.m.bench]
format  = "go"
run     = "$HONE_OUT/bench.test -test.run='^$' -test.bench=. -test.benchtime=200x"
outputs = ["checksum"]
`
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// workspace is a repository holding the module, with hone initialised.
type workspace struct {
	t                     *testing.T
	hone, repo, home, tmp string
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	if testing.Short() {
		t.Skip("judges real patches in the jail: skipped under -short")
	}
	for _, tool := range []string{"go", "bwrap", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	w := &workspace{t: t, hone: e2e.Hone(t), repo: filepath.Join(base, "repo"), home: filepath.Join(base, "home"), tmp: filepath.Join(base, "tmp")}
	for _, d := range []string{w.home, w.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"hone.toml": config(strings.TrimSpace(string(goroot)))}
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
	return w
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
	mainBefore, statusBefore := w.git("rev-parse", "main"), w.git("status", "--porcelain")
	w.write(map[string]string{"m/work.go": src})
	diff := w.git("diff") + "\n"
	w.git("checkout", "-q", "--", ".")
	file := filepath.Join(w.tmp, "patch.diff")
	if err := os.WriteFile(file, []byte(diff), 0o644); err != nil {
		w.t.Fatal(err)
	}
	out := w.run("patch", "propose", "m", "--hotspot", "fold", "--class", "1", "--hypothesis", hypothesis, "--file", file, "--json")
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
	if e.Bench != nil {
		for _, r := range e.Bench.Benchmarks {
			w.t.Logf("  %s counts %v scaling %.2f/%.2f speedup %.3f [%.3f, %.3f] %s", r.Name, r.Counts, r.BaselineScaling, r.CandidateScaling, r.CPUStats.Speedup, r.CPUStats.CILow, r.CPUStats.CIHigh, r.Decision)
		}
	}
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
