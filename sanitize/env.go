package sanitize

import (
	"slices"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// compilerFlags are what GCC and Clang need for the sanitizers: the
// -fsanitize options, UBSan made fatal (by default it prints and carries
// on, and the run exits 0), and the debug information and frame pointers
// that let a report name a file, a line and its callers.
func compilerFlags(sanitizers []string) []string {
	flags := []string{"-g", "-fno-omit-frame-pointer"}
	if slices.Contains(sanitizers, Address) {
		flags = append(flags, "-fsanitize=address")
	}
	if slices.Contains(sanitizers, Leak) && !slices.Contains(sanitizers, Address) {
		flags = append(flags, "-fsanitize=leak")
	}
	if slices.Contains(sanitizers, Undefined) {
		flags = append(flags, "-fsanitize=undefined", "-fno-sanitize-recover=undefined")
	}
	if slices.Contains(sanitizers, Thread) {
		flags = append(flags, "-fsanitize=thread")
	}
	return flags
}

// rustSanitizers are the -Zsanitizer values rustc takes.
func rustSanitizers(sanitizers []string) []string {
	var out []string
	for _, s := range sanitizers {
		switch {
		case s == Address || s == Thread:
			out = append(out, "-Zsanitizer="+s)
		case s == Leak && !slices.Contains(sanitizers, Address):
			out = append(out, "-Zsanitizer=leak")
		}
	}
	return out
}

// goFlag is the go command's build flag for the sanitizers, if any.
func goFlag(sanitizers []string) string {
	switch {
	case slices.Contains(sanitizers, Thread):
		return "-race"
	case slices.Contains(sanitizers, Address):
		return "-asan"
	}
	return ""
}

// runtimeOptions are the sanitizer runtimes' options: every one that
// decides whether a report is printed, where, and whether it fails the
// run. The environment is read after the program's own defaults
// (__asan_default_options and the like), so these cannot be changed from
// inside the program.
func runtimeOptions(sanitizers []string) []string {
	var env []string
	leaks := "0"
	if slices.Contains(sanitizers, Leak) {
		leaks = "1"
	}
	if slices.Contains(sanitizers, Address) {
		env = append(env, "ASAN_OPTIONS=detect_leaks="+leaks+":halt_on_error=1:abort_on_error=0:exitcode=1:log_path=stderr:print_summary=1:symbolize=1")
	}
	if slices.Contains(sanitizers, Leak) {
		env = append(env, "LSAN_OPTIONS=detect_leaks=1:exitcode=23:log_path=stderr:print_summary=1:symbolize=1")
	}
	if slices.Contains(sanitizers, Undefined) {
		env = append(env, "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:report_error_type=1:print_summary=1:log_path=stderr:symbolize=1")
	}
	if slices.Contains(sanitizers, Thread) {
		env = append(env, "TSAN_OPTIONS=halt_on_error=0:exitcode=66:log_path=stderr:print_summary=1:symbolize=1",
			"GORACE=halt_on_error=0 exitcode=66 log_path=stderr")
	}
	return env
}

// applies says which languages each sanitizer has an equivalent in.
var applies = map[string][]string{
	Address:   {C, CXX, Rust, Go},
	Undefined: {C, CXX},
	Leak:      {C, CXX, Rust},
	Thread:    {C, CXX, Rust, Go},
}

// Env returns the environment (KEY=VALUE) for building and running the
// sanitizer build of a tree in the given languages (see Languages): the
// flags as build systems take them (CFLAGS, CXXFLAGS and LDFLAGS for C and
// C++; RUSTFLAGS and RUSTDOCFLAGS for Rust, which need a nightly
// toolchain; GOFLAGS with -race or -asan, and CGO_ENABLED=1, for Go), and
// the runtimes' options. Use it for the build and for the gate's run
// alike: a gate that compiles its own test programs needs the flags, and
// every run needs the options. A sanitizer with no equivalent in any of
// the languages is an error; one that applies to some is used where it
// applies.
func Env(langs, sanitizers []string) ([]string, error) {
	if err := Check(sanitizers); err != nil {
		return nil, err
	}
	if len(langs) == 0 {
		return nil, errs.Invalidf("no language to build with sanitizers; the tree has no C, C++, Rust or Go sources")
	}
	for _, l := range langs {
		if l != C && l != CXX && l != Rust && l != Go {
			return nil, errs.Invalidf("language %.40q is not one of c, c++, rust, go", l)
		}
	}
	for _, s := range sanitizers {
		ok := slices.ContainsFunc(applies[s], func(l string) bool { return slices.Contains(langs, l) })
		if s == Leak && slices.Contains(langs, Go) && slices.Contains(sanitizers, Address) {
			// Go's -asan looks for leaks when ASAN_OPTIONS says so.
			ok = true
		}
		if !ok {
			return nil, errs.Invalidf("the %s sanitizer has no equivalent for %s; it applies to %s",
				s, strings.Join(langs, ", "), strings.Join(applies[s], ", "))
		}
	}
	var env []string
	if slices.Contains(langs, C) || slices.Contains(langs, CXX) {
		flags := strings.Join(compilerFlags(sanitizers), " ")
		env = append(env, "CFLAGS="+flags, "CXXFLAGS="+flags, "LDFLAGS="+flags)
	}
	if z := rustSanitizers(sanitizers); slices.Contains(langs, Rust) && len(z) > 0 {
		flags := strings.Join(append(z, "-Cforce-frame-pointers=yes", "-Cdebuginfo=1"), " ")
		env = append(env, "RUSTFLAGS="+flags, "RUSTDOCFLAGS="+flags)
	}
	if f := goFlag(sanitizers); slices.Contains(langs, Go) && f != "" {
		env = append(env, "GOFLAGS="+f, "CGO_ENABLED=1")
	}
	return append(env, runtimeOptions(sanitizers)...), nil
}
