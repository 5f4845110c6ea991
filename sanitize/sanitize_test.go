package sanitize

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

func envMap(t *testing.T, langs, sanitizers []string) map[string]string {
	t.Helper()
	env, err := Env(langs, sanitizers)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := m[k]; dup {
			t.Fatalf("%s set twice in %q", k, env)
		}
		m[k] = v
	}
	return m
}

func TestEnvPassesFlagsTheWayBuildSystemsTakeThem(t *testing.T) {
	c := envMap(t, []string{C}, []string{Address, Undefined})
	for _, k := range []string{"CFLAGS", "CXXFLAGS", "LDFLAGS"} {
		if c[k] != "-g -fno-omit-frame-pointer -fsanitize=address -fsanitize=undefined -fno-sanitize-recover=undefined" {
			t.Errorf("%s = %q", k, c[k])
		}
	}
	if !strings.Contains(c["ASAN_OPTIONS"], "detect_leaks=0") || !strings.Contains(c["UBSAN_OPTIONS"], "print_stacktrace=1") {
		t.Errorf("runtime options: %v", c)
	}
	if _, ok := c["GOFLAGS"]; ok {
		t.Errorf("GOFLAGS for a C tree: %v", c)
	}

	leaks := envMap(t, []string{CXX}, []string{Address, Leak})
	if strings.Contains(leaks["CXXFLAGS"], "-fsanitize=leak") || !strings.Contains(leaks["ASAN_OPTIONS"], "detect_leaks=1") {
		t.Errorf("leaks with address come from ASan: %v", leaks)
	}
	if l := envMap(t, []string{C}, []string{Leak}); !strings.Contains(l["CFLAGS"], "-fsanitize=leak") {
		t.Errorf("leak alone: %v", l)
	}

	goRace := envMap(t, []string{Go}, []string{Thread})
	if goRace["GOFLAGS"] != "-race" || goRace["CGO_ENABLED"] != "1" || goRace["GORACE"] == "" {
		t.Errorf("go thread: %v", goRace)
	}
	if g := envMap(t, []string{C, Go}, []string{Address, Undefined}); g["GOFLAGS"] != "-asan" || !strings.Contains(g["CFLAGS"], "-fsanitize=undefined") {
		t.Errorf("go address: %v", g)
	}

	rust := envMap(t, []string{Rust}, []string{Address})
	if !strings.HasPrefix(rust["RUSTFLAGS"], "-Zsanitizer=address ") || rust["RUSTDOCFLAGS"] != rust["RUSTFLAGS"] {
		t.Errorf("rust: %v", rust)
	}
}

func TestEnvRefusesWhatCannotBeBuilt(t *testing.T) {
	for name, c := range map[string]struct{ langs, sanitizers []string }{
		"no sanitizer":          {[]string{C}, nil},
		"unknown sanitizer":     {[]string{C}, []string{"memory"}},
		"thread with address":   {[]string{C}, []string{Thread, Address}},
		"thread with leak":      {[]string{Rust}, []string{Leak, Thread}},
		"no language":           {nil, []string{Address}},
		"unknown language":      {[]string{"fortran"}, []string{Address}},
		"undefined has no Go":   {[]string{Go}, []string{Undefined}},
		"leak alone has no Go":  {[]string{Go}, []string{Leak}},
		"undefined has no Rust": {[]string{Rust, Go}, []string{Undefined}},
		"nor with address":      {[]string{Go}, []string{Address, Undefined}},
	} {
		_, err := Env(c.langs, c.sanitizers)
		if !errs.Is(err, errs.Invalid) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want a one-line invalid-input error", name, err)
		}
	}
}

func TestLanguagesFromFileNames(t *testing.T) {
	got := Languages([]string{"json.c", "json.h", "bench/bench.cc", "ffi/Cargo.toml", "tools/gen.go", "README.md", "x.C"})
	if want := []string{C, CXX, Go, Rust}; !slices.Equal(got, want) {
		t.Errorf("Languages = %q, want %q", got, want)
	}
	if got := Languages([]string{"Makefile", "doc.txt"}); len(got) != 0 {
		t.Errorf("no sources: %q", got)
	}
}

func TestKeySeparatesSanitizerBuilds(t *testing.T) {
	if Key(nil) != "" {
		t.Error("a plain build has a sanitizer key")
	}
	if a, b := Key([]string{Undefined, Address}), Key([]string{Address, Undefined, Address}); a != b || a != "sanitize/1:address,undefined" {
		t.Errorf("keys %q and %q", a, b)
	}
	if Key([]string{Address}) == Key([]string{Address, Leak}) {
		t.Error("address and address+leak share a key")
	}
}

// The shim must never find itself: it is first on PATH when the build
// looks for cc, and a wrapper that ran "cc" would run itself forever.
func TestShimRunsTheRealCompilerNeverItself(t *testing.T) {
	dir := t.TempDir()
	real, err := Shim(dir, []string{Address}, append([]string{dir}, systemPath()...))
	if err != nil {
		t.Fatal(err)
	}
	if real["cc"] == "" || filepath.Dir(real["cc"]) == dir {
		t.Fatalf("cc -> %q", real["cc"])
	}
	for name, path := range real {
		script, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(script), "exec '"+path+`' "$@" '-g'`) {
			t.Errorf("%s:\n%s", name, script)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "cc"), "--version").CombinedOutput()
	if err != nil || len(out) == 0 {
		t.Errorf("the cc wrapper: %v\n%s", err, out)
	}
}

// ccache finds the compiler it wraps on PATH, skipping itself, so with the
// shim in front it would call the shim back. A launcher is passed over.
func TestShimPassesOverCompilerLaunchers(t *testing.T) {
	launcherDir := t.TempDir()
	launcher := filepath.Join(launcherDir, "ccache")
	if err := os.WriteFile(launcher, []byte("#!/bin/sh\nexec cc \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(launcher, filepath.Join(launcherDir, "cc")); err != nil {
		t.Fatal(err)
	}
	real, err := Shim(t.TempDir(), []string{Address}, append([]string{launcherDir}, systemPath()...))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(real["cc"]) == launcherDir {
		t.Errorf("cc -> %s, a launcher", real["cc"])
	}
}

func TestShimRefusesBadInput(t *testing.T) {
	if _, err := Shim("relative", []string{Address}, systemPath()); !errs.Is(err, errs.Invalid) {
		t.Errorf("relative dir: %v", err)
	}
	if _, err := Shim(t.TempDir(), []string{"memory"}, systemPath()); !errs.Is(err, errs.Invalid) {
		t.Errorf("unknown sanitizer: %v", err)
	}
	if _, err := Shim(t.TempDir(), []string{Address}, []string{t.TempDir()}); !errs.Is(err, errs.Failure) {
		t.Errorf("no compiler: %v", err)
	}
}
