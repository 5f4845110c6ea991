package sanitize

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/tier"
)

// gate builds a sample program and runs it the way a verdict runs a
// sanitizer gate: in the jail, the sources at /hone/src and the build
// output at /hone/out (both writable for the build), the shim read-only at
// /hone/shim first on PATH, Env's variables set for the build and the run,
// and no data limit.
type gate struct {
	src, out   string
	sanitizers []string
	env        []string
	path       []string
	shim       string
	gocache    string // a Go build cache mounted writable at /hone/gocache, if set
}

// systemPath is the PATH the jail gives every command, split.
func systemPath() []string {
	for _, kv := range jail.Environment("/", nil, nil) {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			return strings.Split(p, ":")
		}
	}
	return nil
}

func newGate(t *testing.T, sanitizers []string, programs ...string) *gate {
	t.Helper()
	if err := jail.Check("deny"); err != nil {
		t.Skip(err)
	}
	g := &gate{src: t.TempDir(), out: t.TempDir(), sanitizers: sanitizers}
	var files []string
	for _, p := range programs {
		b, err := os.ReadFile(filepath.Join("testdata", "programs", p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(g.src, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	if len(sanitizers) == 0 {
		return g
	}
	env, err := Env(Languages(files), sanitizers)
	if err != nil {
		t.Fatal(err)
	}
	g.env, g.shim, g.path = env, t.TempDir(), []string{"/hone/shim"}
	if _, err := Shim(g.shim, sanitizers, systemPath()); err != nil {
		t.Fatal(err)
	}
	return g
}

func (g *gate) run(t *testing.T, command string) *jail.Result {
	t.Helper()
	mounts := []jail.Mount{{Host: g.src, Jail: "/hone/src", Mode: jail.ReadWrite}, {Host: g.out, Jail: "/hone/out", Mode: jail.ReadWrite}}
	if g.shim != "" {
		mounts = append(mounts, jail.Mount{Host: g.shim, Jail: "/hone/shim", Mode: jail.ReadOnly})
	}
	if g.gocache != "" {
		mounts = append(mounts, jail.Mount{Host: g.gocache, Jail: "/hone/gocache", Mode: jail.ReadWrite})
	}
	res, err := jail.Run(context.Background(), jail.Spec{
		Command: command, Dir: "/hone/src", Env: g.env, Path: g.path, Mounts: mounts,
		Limits: jail.Limits{Data: jail.NoLimit}, Timeout: 2 * time.Minute,
		// LeakSanitizer stops the program with ptrace, which the filter
		// allows sanitizer gates alone (as build.Side does for them).
		Seccomp: jail.Seccomp{Ptrace: len(g.sanitizers) > 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.MeterFailed {
		t.Fatalf("%s: %s", command, res.Describe())
	}
	return res
}

// build runs the build command, which must succeed.
func (g *gate) build(t *testing.T, command string) {
	t.Helper()
	if res := g.run(t, command); !res.Success() {
		t.Fatalf("build %q: %s\n%s", command, res.Describe(), res.Stderr.Bytes())
	}
}

// caught checks that a run failed with the expected report.
func caught(t *testing.T, res *jail.Result, kind, frame string) {
	t.Helper()
	f := Report(append(res.Stderr.Bytes(), res.Stderr.Tail(8<<10)...))
	if res.Success() || f == nil || f.Kind != kind || f.Frame() != frame {
		t.Fatalf("%s, finding %v; want a failed run reporting %s in %s\n%s", res.Describe(), f, kind, frame, res.Stderr.Bytes())
	}
}

func clean(t *testing.T, res *jail.Result) {
	t.Helper()
	if !res.Success() || Report(res.Stderr.Bytes()) != nil {
		t.Fatalf("%s, finding %v\n%s", res.Describe(), Report(res.Stderr.Bytes()), res.Stderr.Bytes())
	}
}

// The build command names cc and sets its own flags, as a candidate's test
// build might: the shim covers it.
const ccBuild = "cc -O2 -o /hone/out/prog uaf.c"

func TestUseAfterFreeThatPassesWithoutASanIsCaughtByAddress(t *testing.T) {
	tier.Jail(t)
	plain := newGate(t, nil, "uaf.c")
	plain.build(t, ccBuild)
	clean(t, plain.run(t, "/hone/out/prog"))

	g := newGate(t, []string{Address, Undefined}, "uaf.c")
	g.build(t, ccBuild)
	caught(t, g.run(t, "/hone/out/prog"), "heap-use-after-free", "suffix_object uaf.c:10")
}

// make's built-in rule compiles with $(CC) $(CFLAGS): the flags come in
// through the environment as well as the shim.
func TestSignedOverflowIsCaughtByUndefined(t *testing.T) {
	tier.Jail(t)
	plain := newGate(t, nil, "overflow.c")
	plain.build(t, "make overflow")
	clean(t, plain.run(t, "./overflow"))

	g := newGate(t, []string{Undefined}, "overflow.c")
	g.build(t, "make overflow")
	caught(t, g.run(t, "./overflow"), "signed-integer-overflow", "add overflow.c:5")
}

func TestCleanProgramPassesEverySanitizer(t *testing.T) {
	tier.Jail(t)
	g := newGate(t, []string{Address, Undefined, Leak}, "clean.c")
	g.build(t, "cc -o /hone/out/prog clean.c")
	res := g.run(t, "/hone/out/prog")
	clean(t, res)
	if string(res.Stdout.Bytes()) != "3\n" {
		t.Errorf("stdout = %q", res.Stdout.Bytes())
	}
}

// LeakSanitizer stops the program with ptrace to scan its memory, from a
// task it clones without CLONE_THREAD (a process to the meter's counter);
// it runs only when the gate asks for leaks, and works under the filter.
func TestLeaksFailTheGateOnlyWhenAsked(t *testing.T) {
	tier.Jail(t)
	g := newGate(t, []string{Address}, "leak.c")
	g.build(t, "cc -o /hone/out/prog leak.c")
	clean(t, g.run(t, "/hone/out/prog"))

	g = newGate(t, []string{Address, Leak}, "leak.c")
	g.build(t, "cc -o /hone/out/prog leak.c")
	res := g.run(t, "/hone/out/prog")
	caught(t, res, "memory-leak", "make leak.c:7")
	if res.Seccomp != jail.FilterVersion && os.Getenv("HONE_SECCOMP") != "off" {
		t.Errorf("the leak was caught under filter %q, want %q", res.Seccomp, jail.FilterVersion)
	}

	g = newGate(t, []string{Leak}, "leak.c")
	g.build(t, "cc -o /hone/out/prog leak.c")
	caught(t, g.run(t, "/hone/out/prog"), "memory-leak", "make leak.c:7")
}

func TestDataRaceIsCaughtByThread(t *testing.T) {
	tier.Jail(t)
	g := newGate(t, []string{Thread}, "race.c")
	g.build(t, "cc -o /hone/out/prog race.c -lpthread")
	caught(t, g.run(t, "/hone/out/prog"), "data-race", "worker race.c:8")
}

// Flags that come before the shim's, from a Makefile or a build script the
// candidate may edit, cannot turn the sanitizer off or make it recover.
func TestCandidateCannotTurnTheSanitizerOffWithItsOwnFlags(t *testing.T) {
	tier.Jail(t)
	g := newGate(t, []string{Address, Undefined}, "uaf.c", "overflow.c")
	g.build(t, "cc -fno-sanitize=all -fsanitize-recover=all -o /hone/out/uaf uaf.c")
	caught(t, g.run(t, "/hone/out/uaf"), "heap-use-after-free", "suffix_object uaf.c:10")
	g.build(t, "make CFLAGS='-O1 -fno-sanitize=undefined -fsanitize-recover=undefined' overflow")
	caught(t, g.run(t, "./overflow"), "signed-integer-overflow", "add overflow.c:5")
}

// The program's own __asan_default_options would make ASan log to
// /dev/null and exit 0; the options in the environment come later and win.
func TestCandidateCannotSilenceTheSanitizerFromItsCode(t *testing.T) {
	tier.Jail(t)
	g := newGate(t, []string{Address}, "uaf_quiet.c")
	g.build(t, "cc -o /hone/out/prog uaf_quiet.c")
	caught(t, g.run(t, "/hone/out/prog"), "heap-use-after-free", "suffix_object uaf_quiet.c:15")
}
