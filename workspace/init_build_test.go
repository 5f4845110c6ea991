package workspace

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/tier"
)

// Each sample project in testdata/layouts is hone's own: init must find it,
// and the build, gates and bench it writes must work when run the way a
// verdict runs them. The containment work that moves verdicts into the
// jail has not landed, so the commands run through internal/jail directly
// with the mounts it will use: the checkout at /hone/src and $HONE_OUT at
// /hone/out, both writable for the build; for gates and bench runs a
// private copy of the built checkout and $HONE_OUT read-only. {seed} is
// replaced and HONE_SEED set, as issue 13's verdict will do.
func TestInitWritesCommandsThatWorkInTheJail(t *testing.T) {
	tier.Jail(t)
	tests := []struct {
		sample string
		tools  []string // needed on this machine
		quick  bool     // runs under -short
	}{
		{"make", []string{"make", "cc"}, true},
		{"cmake", []string{"cmake", "ctest", "make", "cc"}, false},
		{"meson", []string{"meson", "ninja", "cc"}, false},
		{"cargo", []string{"cargo", "cc"}, false},
		{"cargo-harness", []string{"cargo", "cc"}, false},
		{"go", []string{"go"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			t.Parallel() // each sample has its own repository and folders
			start := time.Now()
			files := sample(t, tt.sample)
			dir := testgit.NewRepo(t, files)
			res, err := Init(context.Background(), dir, InitOptions{StartLedger: noLedger})
			if err != nil {
				t.Fatal(err)
			}
			if res.BuildSystem != strings.TrimSuffix(tt.sample, "-harness") || res.Detected == nil {
				t.Fatalf("init found %q, want the %s sample's build system", res.BuildSystem, tt.sample)
			}
			ws, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := ws.Target(res.Target)
			if err != nil {
				t.Fatal(err)
			}
			if tg.Build == "" || len(tg.Gates) == 0 || tg.Bench.Run == "" {
				t.Fatalf("target %+v lacks a build, a gate or a bench", tg)
			}
			checkAllowlist(t, tg, files)
			if testing.Short() && !tt.quick {
				t.Skip("builds a sample project: skipped under -short")
			}
			needTools(t, tt.tools)
			h := &honeRuns{t: t, target: tg, readOnly: ws.Config.Sandbox.ReadOnly, src: t.TempDir(), out: t.TempDir()}
			testgit.WriteFiles(t, h.src, files)
			if tt.sample == "go" {
				h.goEnv()
			}
			h.run("build", tg.Build, "", jail.ReadWrite, jail.ReadWrite)
			built := time.Since(start)
			for _, g := range tg.Gates {
				out := h.run("gate "+g.Name, g.Run, "7", jail.Copy, jail.ReadOnly)
				if !g.Equivalence {
					continue
				}
				if again := h.run("gate "+g.Name, g.Run, "7", jail.Copy, jail.ReadOnly); again != out || out == "" {
					t.Errorf("gate %s printed %q, then %q with the same seed", g.Name, out, again)
				}
				if other := h.run("gate "+g.Name, g.Run, "8", jail.Copy, jail.ReadOnly); other == out {
					t.Errorf("gate %s printed %q for seeds 7 and 8: the seed does not reach the program", g.Name, out)
				}
			}
			h.run("bench", tg.Bench.Run, "7", jail.Copy, jail.ReadOnly)
			t.Logf("%s: init and build %v, gates and bench %v", tt.sample, built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond))
		})
	}
}

// needTools fails the test, or skips it under -short, when a tool or the
// jail is missing here.
func needTools(t *testing.T, tools []string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if testing.Short() {
				t.Skipf("%s is not installed", tool)
			}
			t.Fatalf("%s is not installed; run scripts/ci-deps.sh to install the tools hone's tests use", tool)
		}
	}
	if err := jail.Check("deny"); err != nil {
		if testing.Short() {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

func noLedger(context.Context, *Workspace) (bool, error) { return false, nil }

// sample reads testdata/layouts/NAME.txtar into files.
func sample(t *testing.T, name string) map[string]string {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", "layouts", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range a.Files {
		files[f.Name] = string(f.Data)
	}
	return files
}

// checkAllowlist checks that the target's tests, test data and harnesses
// may not be patched, and that its sources may.
func checkAllowlist(t *testing.T, tg *Target, files map[string]string) {
	t.Helper()
	rules := tg.Rules()
	for name := range files {
		inTarget := strings.HasPrefix(name, tg.Path+"/")
		base := filepath.Base(name)
		harness := strings.Contains(name, "/tests/") || strings.HasPrefix(name, "tests/") || strings.Contains(name, "/benches/") || strings.HasSuffix(name, "_test.go")
		buildFile := base == "Makefile" || base == "CMakeLists.txt" || base == "meson.build" || base == "Cargo.toml" || base == "Cargo.lock" || base == "go.mod"
		source := inTarget && !harness && !buildFile
		if allowed := rules.Rule(name) == ""; allowed != source {
			t.Errorf("%s: patchable %v, want %v (rule %q)", name, allowed, source, rules.Rule(name))
		}
	}
}

// honeRuns runs a target's commands as a verdict does.
type honeRuns struct {
	t        *testing.T
	target   *Target
	readOnly []string
	src, out string
	env      []string
	mounts   []jail.Mount
}

// goEnv gives Go commands hone's Go settings. A verdict serves the build
// cache through GOCACHEPROG; here the tests' shared writable cache
// (e2e.GoCache) spares a cold build of the standard library on every run.
func (h *honeRuns) goEnv() {
	cache := e2e.GoCache(h.t)
	h.env = append(h.env, "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOTOOLCHAIN=local", "GOCACHE=/hone/gocache")
	h.mounts = append(h.mounts, jail.Mount{Host: cache, Jail: "/hone/gocache", Mode: jail.ReadWrite})
}

// run runs one command with the seed and returns its stdout; a failure
// fails the test with the command's stderr.
func (h *honeRuns) run(what, command, seed string, src, out jail.Mode) string {
	h.t.Helper()
	env := append([]string{"HONE_ROOT=/hone/src", "HONE_OUT=/hone/out", "HONE_TARGET=" + h.target.Name}, h.env...)
	if seed != "" {
		command = strings.ReplaceAll(command, "{seed}", seed)
		env = append(env, "HONE_SEED="+seed)
	}
	res, err := jail.Run(context.Background(), jail.Spec{
		Command:  command,
		Dir:      "/hone/src/" + h.target.Path,
		Env:      env,
		Mounts:   append([]jail.Mount{{Host: h.src, Jail: "/hone/src", Mode: src}, {Host: h.out, Jail: "/hone/out", Mode: out}}, h.mounts...),
		ReadOnly: h.readOnly,
		Timeout:  5 * time.Minute,
	})
	if err != nil {
		h.t.Fatalf("%s: %v", what, err)
	}
	if !res.Success() {
		h.t.Fatalf("%s `%s`: %s\nstdout: %s\nstderr: %s", what, command, res.Describe(), res.Stdout.Tail(2000), res.Stderr.Tail(4000))
	}
	return string(res.Stdout.Bytes())
}
