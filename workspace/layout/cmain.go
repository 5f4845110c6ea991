package layout

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

var (
	cMainRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(?:(?:static|extern)\s+)?(?:int|void)?\s*main\s*\(`)
	})
	cDirectiveRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b`) })
)

// definesMain reports whether a C or C++ file always defines main: the
// file is a program (or a test, or a harness), not a library source. A
// main inside a comment, or under a preprocessor condition, does not
// count: zlib's crc32.c has one under `#ifdef MAKECRCH` and inflate.c one
// in a comment, and both are core sources the build compiles.
func definesMain(file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	depth := 0
	for _, line := range strings.Split(stripCComments(string(b)), "\n") {
		if m := cDirectiveRE().FindStringSubmatch(line); m != nil {
			switch m[1] {
			case "if", "ifdef", "ifndef":
				depth++
			case "endif":
				if depth > 0 {
					depth--
				}
			}
			continue
		}
		if depth == 0 && cMainRE().MatchString(line) {
			return true
		}
	}
	return false
}

// stripCComments blanks out comments, string and character literals,
// keeping every newline so that lines stay lines.
func stripCComments(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			b.WriteString(strings.Repeat("\n", strings.Count(src[i:i+2+end], "\n")))
			i += end + 3
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			if i < len(src) {
				b.WriteByte('\n')
			}
		case c == '"' || c == '\'':
			quote := c
			b.WriteByte(' ')
			for i++; i < len(src) && src[i] != quote && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
