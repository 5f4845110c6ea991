// Package sanitize builds a candidate with compiler sanitizers for a gate
// (`sanitize = ["address", "undefined"]`) and reads their reports.
//
// The build command stays as the user wrote it. The sanitizer flags reach
// the compiler two ways: through the variables build systems read (CFLAGS,
// CXXFLAGS, LDFLAGS, RUSTFLAGS, GOFLAGS; see Env), and through a compiler
// shim put first on PATH (see Shim), so that a build that names cc
// directly, or sets its own CFLAGS, is covered too. The shim adds its
// flags after the command's own, so no flag in the build files turns a
// sanitizer off, and Env sets every runtime option that decides whether a
// report is printed and fails the run, so the program cannot change them
// from the inside (__asan_default_options is read before the environment).
//
// Supported: C and C++ with GCC or Clang (address, undefined, leak,
// thread); Rust on a nightly toolchain (address, leak, thread through
// -Zsanitizer); Go (address through -asan, thread through -race).
//
// A sanitizer build needs room: AddressSanitizer reserves terabytes of
// address space and aborts under a data limit (run it with
// jail.Limits{Data: jail.NoLimit}), and LeakSanitizer stops the program
// with ptrace, which the jail allows.
package sanitize

import (
	"path"
	"slices"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// The sanitizers a gate may name.
const (
	Address   = "address"   // AddressSanitizer: use after free, overflows, double free
	Undefined = "undefined" // UndefinedBehaviorSanitizer: overflow, bad shifts, null, misalignment
	// Leak turns on LeakSanitizer. Address alone does not look for leaks:
	// many test programs leak on purpose, and a leak corrupts nothing.
	Leak   = "leak"
	Thread = "thread" // ThreadSanitizer (Go: the race detector)
)

// Sanitizers lists the valid names.
func Sanitizers() []string { return []string{Address, Undefined, Leak, Thread} }

// The languages Env knows.
const (
	C    = "c"
	CXX  = "c++"
	Rust = "rust"
	Go   = "go"
)

// Check validates a gate's sanitize list: known names that can be
// combined (ThreadSanitizer works alone).
func Check(sanitizers []string) error {
	if len(sanitizers) == 0 {
		return errs.Invalidf("the sanitize list is empty; name one of %s", strings.Join(Sanitizers(), ", "))
	}
	for _, s := range sanitizers {
		if !slices.Contains(Sanitizers(), s) {
			return errs.Invalidf("sanitizer %.40q is not one of %s", s, strings.Join(Sanitizers(), ", "))
		}
	}
	if slices.Contains(sanitizers, Thread) && (slices.Contains(sanitizers, Address) || slices.Contains(sanitizers, Leak)) {
		return errs.Invalidf("the thread sanitizer cannot be combined with address or leak; use two gates")
	}
	return nil
}

// Key is what the build cache key must include for a sanitizer build:
// empty for none, otherwise the sorted names with a version that changes
// whenever the flags Env and Shim add do.
func Key(sanitizers []string) string {
	if len(sanitizers) == 0 {
		return ""
	}
	s := slices.Compact(slices.Sorted(slices.Values(sanitizers)))
	return "sanitize/1:" + strings.Join(s, ",")
}

// Languages names the languages of a tree from its file paths: C for .c
// and .h files, C++ for .cc, .cpp, .cxx, .hh, .hpp and the like, Rust for
// Cargo.toml or .rs files, Go for go.mod or .go files. Sorted, each once.
func Languages(files []string) []string {
	seen := map[string]bool{}
	for _, f := range files {
		base := path.Base(f)
		switch {
		case base == "Cargo.toml":
			seen[Rust] = true
		case base == "go.mod":
			seen[Go] = true
		}
		switch path.Ext(base) {
		case ".c", ".h":
			seen[C] = true
		case ".cc", ".cpp", ".cxx", ".c++", ".C", ".hh", ".hpp", ".hxx", ".h++":
			seen[CXX] = true
		case ".rs":
			seen[Rust] = true
		case ".go":
			seen[Go] = true
		}
	}
	out := make([]string, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}
