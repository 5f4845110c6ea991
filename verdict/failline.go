package verdict

import (
	"bytes"
	"regexp"
	"strings"
	"sync"

	"github.com/hone-perf/hone/internal/errs"
)

// failurePattern matches a line that says what failed, in the words of
// the usual test harnesses and runtimes: Go's testing (--- FAIL, panic:),
// assert(3) and friends (Assertion ... failed), compilers and most tools
// (error:), TAP (not ok), GoogleTest ([  FAILED  ]), Rust (panicked at),
// Python (Traceback, AssertionError:), the sanitizers' headers and
// summaries, and the shell's word for a crash.
var failurePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bFAIL(ED|URE)?\b|\bAssertion\b|\bassert(ion)? failed\b|\b\w*[Ee]rror:|\bpanic:|` +
		`\bpanicked at\b|^==\d+==ERROR: |\bruntime error:|^WARNING: (DATA RACE|ThreadSanitizer)|^SUMMARY: \w*Sanitizer|` +
		`^Traceback \(most recent call last\)|^not ok\b|\bSegmentation fault\b|\bAborted\b`)
})

// maxFailureLine bounds the line a summary quotes.
const maxFailureLine = 300

// failureLine is the line a person wants first from a failed run: the
// first line of stderr that matches a failure pattern, else the first of
// stdout, else the last non-blank line of stderr, else of stdout. It reads
// all it is given, so a failure deep in a long log is found.
func failureLine(stdout, stderr []byte) string {
	for _, b := range [][]byte{stderr, stdout} {
		if l := firstMatch(b); l != "" {
			return l
		}
	}
	for _, b := range [][]byte{stderr, stdout} {
		if l := lastLine(b); l != "" {
			return l
		}
	}
	return ""
}

func firstMatch(b []byte) string {
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		if failurePattern().Match(bytes.TrimRight(line, "\r")) {
			return quoted(string(line))
		}
		b = rest
	}
	return ""
}

func lastLine(b []byte) string {
	lines := bytes.Split(bytes.TrimRight(b, " \t\r\n"), []byte("\n"))
	return quoted(string(lines[len(lines)-1]))
}

func quoted(s string) string {
	return errs.ClipTo(strings.TrimSpace(strings.ToValidUTF8(s, "?")), maxFailureLine)
}
