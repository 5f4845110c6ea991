package sanitize

import (
	"regexp"
	"sync"
)

// evasion matches the ways code can escape or detect a sanitizer build:
// attributes that turn instrumentation off for a function (no_sanitize in
// any spelling, Go's //go:norace, Rust's #[sanitize]/#[no_sanitize]),
// compile-time tests for a sanitizer build (__SANITIZE_ADDRESS__,
// __has_feature(address_sanitizer), Go's race build tag or race.Enabled,
// Rust's cfg(sanitize)), the runtimes' interfaces (__asan_*,
// __sanitizer_set_death_callback, __lsan_disable, ...), their option
// variables read at run time, and their libraries' names.
var evasion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bno_sanitize\w*|\bno_address_safety_analysis\b|\bdisable_sanitizer_instrumentation\b|` +
		`__SANITIZE_\w+|__has_feature\s*\(\s*\w*_sanitizer|\b__(asan|lsan|ubsan|tsan|msan|hwasan|sanitizer)_\w+|` +
		`\b(ASAN|LSAN|UBSAN|TSAN|MSAN)_OPTIONS\b|\bGORACE\b|//\s*go:norace\b|//\s*go:build\b.*\brace\b|\brace\.Enabled\b|` +
		`#!?\[\s*(no_)?sanitize\b|\bcfg\s*\(\s*sanitize\b|\blib(asan|lsan|ubsan|tsan|msan)\b`)
})

// Evasive reports whether a line of source code (a line a patch adds)
// turns a sanitizer off, tells a sanitizer build from a plain one, or
// reaches into a sanitizer runtime (or looks for its library among the
// process's mappings). Code that does can pass a sanitizer gate while the
// build that is measured misbehaves, so a patch that adds such a line
// needs a person's review (a risk signal), whatever the gates say. A
// spelling the pattern misses (a name pasted together by the
// preprocessor) gets past it: this is a signal, not a proof.
func Evasive(line string) bool { return evasion().MatchString(line) }
