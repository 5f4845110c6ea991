package sanitize

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/tier"
)

func copyProgram(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", "programs", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// A Go gate with `thread` builds with the race detector through GOFLAGS,
// in the jail, with the Go toolchain the system provides.
func TestGoRaceBuildThroughEnvReportsTheRace(t *testing.T) {
	tier.Jail(t)
	if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
		t.Skip("no Go toolchain under /usr/local/go for the jail")
	}
	g := newGate(t, nil)
	g.src = copyProgram(t, "gorace")
	env, err := Env([]string{Go}, []string{Thread})
	if err != nil {
		t.Fatal(err)
	}
	// The tests' shared Go build cache (e2e.GoCache): the race report is the
	// subject, not a cold -race build of the standard library. Its
	// entries are keyed by their flags, so it cannot stand in for -race.
	g.gocache = e2e.GoCache(t)
	g.env = append(env, "GOTOOLCHAIN=local", "GOCACHE=/hone/gocache")
	g.path = []string{"/usr/local/go/bin"}
	g.build(t, "go build -o /hone/out/race .")
	caught(t, g.run(t, "/hone/out/race"), "data-race", "main.bump main.go:14")
}

// A Rust gate with `address` needs a nightly toolchain. It runs on the
// host: rustup keeps its toolchains in root's home, which the jail user
// cannot read ([sandbox] read_only would have to name them).
func TestRustNightlyBuildThroughEnvReportsTheOverflow(t *testing.T) {
	if err := exec.Command("cargo", "+nightly", "--version").Run(); err != nil {
		t.Skip("no nightly Rust toolchain (rustup toolchain install nightly)")
	}
	src := copyProgram(t, "rust")
	env, err := Env([]string{Rust}, []string{Address})
	if err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	env = append(append(os.Environ(), env...), "CARGO_TARGET_DIR="+target)
	build := exec.Command("cargo", "+nightly", "build", "-q", "--offline")
	build.Dir, build.Env = src, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("cargo build: %v\n%s", err, out)
	}
	run := exec.Command(filepath.Join(target, "debug", "ruaf"))
	run.Env = env
	stderr, err := run.CombinedOutput()
	f := Report(stderr)
	if err == nil || f == nil || f.Kind != "heap-buffer-overflow" || f.Frame() != "ruaf::suffix_object main.rs:4" {
		t.Fatalf("%v, finding %v\n%s", err, f, stderr)
	}
}
