package sanitize

import (
	"bufio"
	"bytes"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/hone-perf/hone/internal/errs"
)

// Finding is the first sanitizer report in a run's stderr.
type Finding struct {
	// Sanitizer is the runtime that reported: AddressSanitizer,
	// LeakSanitizer, UndefinedBehaviorSanitizer, ThreadSanitizer, or "Go
	// race detector".
	Sanitizer string `toml:"sanitizer" json:"sanitizer"`
	// Kind is the error in the runtime's own words, as in its SUMMARY
	// line: "heap-use-after-free", "double-free", "signed-integer-overflow",
	// "data-race", "memory-leak".
	Kind string `toml:"kind" json:"kind"`
	// Function, File and Line are the first frame in the program's own
	// code: the first that is neither in a sanitizer runtime, nor in the
	// C, Rust or Go runtime, nor without a source line. Empty when no
	// frame qualifies (a build without debug information).
	Function string `toml:"function,omitempty" json:"function,omitempty"`
	File     string `toml:"file,omitempty" json:"file,omitempty"`
	Line     int    `toml:"line,omitempty" json:"line,omitempty"`
	// Header is the report's first line, clipped.
	Header string `toml:"header" json:"header"`
}

// Frame is the first frame of the program's own code as "function
// file:line", with the file's base name ("suffix_object json.c:123").
func (f *Finding) Frame() string {
	if f.File == "" {
		return f.Function
	}
	loc := path.Base(f.File) + ":" + strconv.Itoa(f.Line)
	if f.Function == "" {
		return loc
	}
	return f.Function + " " + loc
}

// String is a one-line account: "AddressSanitizer: heap-use-after-free in
// suffix_object json.c:123".
func (f *Finding) String() string {
	s := f.Sanitizer + ": " + f.Kind
	if fr := f.Frame(); fr != "" {
		s += " in " + fr
	}
	return s
}

var (
	// ==123==ERROR: AddressSanitizer: heap-use-after-free on address ...
	errorHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^==\d+==ERROR: (AddressSanitizer|LeakSanitizer|ThreadSanitizer|MemorySanitizer|HWAddressSanitizer): (.*)$`)
	})
	// WARNING: ThreadSanitizer: data race (pid=123)
	tsanHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^WARNING: (ThreadSanitizer): (.*?)(?: \(pid=\d+\))?$`)
	})
	// file.c:12:5: runtime error: signed integer overflow: ...
	ubsanHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+?):(\d+):\d+: runtime error: (.*)$`) })
	summary     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^SUMMARY: (\w+): (.*)$`) })
	// #0 0x55d in suffix_object /src/json.c:123   (sanitizer_common)
	// #0 worker /src/race.c:3 (race+0x11d9)      (ThreadSanitizer)
	frameLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#\d+ (?:0x[0-9a-f]+ )?(?:in )?(.*)$`) })
	module    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` \([^()]*\+0x[0-9a-f]+\)$`) })
	location  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+?):(\d+)(?::\d+)?$`) })
	// Go's race detector: "  main.bump()" then "      /src/main.go:13 +0x8d".
	goFunc = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s+(\S.*)\(.*\)$`) })
	goLoc  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s+(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$`) })
)

// Report finds the first AddressSanitizer, LeakSanitizer, UBSan or
// ThreadSanitizer report (or Go race detector report) in stderr, or
// returns nil. Give it all of stderr the run kept, its tail too when the
// stream was cut.
func Report(stderr []byte) *Finding {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	for i, l := range lines {
		if f := header(l); f != nil {
			rest := lines[i+1:]
			if f.Sanitizer == "Go race detector" {
				goFrames(f, rest)
			} else {
				frames(f, rest)
			}
			return f
		}
	}
	return nil
}

// header recognises the first line of a report.
func header(l string) *Finding {
	f := &Finding{Header: errs.ClipTo(strings.TrimSpace(l), 200)}
	if m := errorHeader().FindStringSubmatch(l); m != nil {
		f.Sanitizer, f.Kind = m[1], firstField(m[2])
		switch {
		case m[1] == "LeakSanitizer":
			f.Kind = "memory-leak"
		case f.Kind == "":
			f.Kind = "unknown"
		}
		return f
	}
	if m := tsanHeader().FindStringSubmatch(l); m != nil {
		kind, _, _ := strings.Cut(m[2], " (")
		f.Sanitizer, f.Kind = m[1], strings.ReplaceAll(strings.TrimSpace(kind), " ", "-")
		if f.Kind == "" {
			f.Kind = "unknown"
		}
		return f
	}
	if m := ubsanHeader().FindStringSubmatch(l); m != nil {
		f.Sanitizer, f.Kind = "UndefinedBehaviorSanitizer", ubsanKind(m[3])
		f.File, f.Line = m[1], atoi(m[2])
		return f
	}
	if strings.TrimSpace(l) == "WARNING: DATA RACE" {
		f.Sanitizer, f.Kind = "Go race detector", "data-race"
		return f
	}
	return nil
}

// frames reads the report's stack traces up to its SUMMARY, taking the
// kind from the SUMMARY (the header's words vary: "attempting double-free
// on ...") and the first frame of the program's own code.
func frames(f *Finding, lines []string) {
	found := false
	for _, l := range lines {
		if m := summary().FindStringSubmatch(l); m != nil {
			if k := firstField(m[2]); k != "" && f.Kind != "memory-leak" && f.Sanitizer != "ThreadSanitizer" {
				f.Kind = k
			}
			return
		}
		if header(l) != nil {
			return
		}
		if found {
			continue
		}
		m := frameLine().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		rest := module().ReplaceAllString(m[1], "")
		sp := strings.LastIndexByte(rest, ' ')
		if sp < 0 {
			continue
		}
		fn, loc := rest[:sp], location().FindStringSubmatch(rest[sp+1:])
		if loc == nil || !own(fn, loc[1]) {
			continue
		}
		f.Function, f.File, f.Line, found = fn, loc[1], atoi(loc[2]), true
	}
}

func goFrames(f *Finding, lines []string) {
	fn := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "==================") {
			return
		}
		if m := goLoc().FindStringSubmatch(l); m != nil && fn != "" {
			if own(fn, m[1]) {
				f.Function, f.File, f.Line = fn, m[1], atoi(m[2])
				return
			}
			fn = ""
			continue
		}
		if m := goFunc().FindStringSubmatch(l); m != nil {
			fn = m[1]
		}
	}
}

// Frames in these files or functions belong to a runtime, not to the
// program: the sanitizer runtimes (GCC builds them from ../../../../src/
// libsanitizer, LLVM from compiler-rt), the C library (../sysdeps,
// ../csu), installed toolchains and headers (/usr), Rust's standard
// library (/rustc/<hash>/library), Go's runtime.
var (
	runtimeDirs  = []string{"/usr/", "/lib/", "/lib64/", "/rustc/", "../"}
	runtimeFuncs = []string{"__interceptor_", "___interceptor_", "__asan", "__lsan", "__ubsan", "__tsan",
		"__sanitizer", "__libc_", "_start", "runtime.", "sync.", "sync/atomic.", "internal/", "testing."}
)

func own(fn, file string) bool {
	for _, d := range runtimeDirs {
		if strings.HasPrefix(file, d) {
			return false
		}
	}
	if strings.Contains(file, "/libsanitizer/") || strings.Contains(file, "/compiler-rt/") {
		return false
	}
	for _, p := range runtimeFuncs {
		if strings.HasPrefix(fn, p) {
			return false
		}
	}
	return fn != "<null>"
}

// ubsanKinds name UBSan's checks (as -fsanitize= spells them) from the
// start of their messages, for a report without its SUMMARY line.
var ubsanKinds = []struct{ prefix, kind string }{
	{"signed integer overflow", "signed-integer-overflow"},
	{"negation of", "signed-integer-overflow"},
	{"division by zero", "integer-divide-by-zero"},
	{"shift exponent", "shift"},
	{"left shift of", "shift"},
	{"index ", "bounds"},
	{"load of null pointer", "null"},
	{"store to null pointer", "null"},
	{"member access within null pointer", "null"},
	{"member call on null pointer", "null"},
	{"reference binding to null pointer", "null"},
	{"load of misaligned address", "alignment"},
	{"store to misaligned address", "alignment"},
	{"pointer index expression", "pointer-overflow"},
	{"execution reached an unreachable program point", "unreachable"},
	{"execution reached the end of a value-returning function", "return"},
	{"variable length array bound", "vla-bound"},
	{"null pointer passed as argument", "nonnull-attribute"},
	{"load of value", "invalid-value"},
}

func ubsanKind(msg string) string {
	for _, k := range ubsanKinds {
		if strings.HasPrefix(msg, k.prefix) {
			return k.kind
		}
	}
	if strings.Contains(msg, "is outside the range of representable values") {
		return "float-cast-overflow"
	}
	return "undefined-behavior"
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
