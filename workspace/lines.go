package workspace

import (
	"bufio"
	"bytes"
	"strings"

	"github.com/BurntSushi/toml"
)

// keyLine finds the line where key is set, for messages: the line that
// assigns it, else the table header that opens it, else the first line that
// sets a key below it (a table made implicitly by dotted keys), else the line
// of its nearest parent (a key left to its default), else 0. It
// understands quoted and dotted keys, [table] and [[array]] headers, and skips
// the inside of multi-line strings, which is enough to point at the right line
// of any file the decoder accepted.
func keyLine(data []byte, key toml.Key) int {
	if len(key) == 0 {
		return 0
	}
	want := key.String()
	below := 0
	for _, kp := range keyPositions(data) {
		if kp.key == want {
			return kp.line
		}
		if below == 0 && strings.HasPrefix(kp.key, want+".") {
			below = kp.line
		}
	}
	if below == 0 && len(key) > 1 {
		return keyLine(data, key[:len(key)-1])
	}
	return below
}

type keyPos struct {
	key  string // as toml.Key.String() spells it
	line int
}

// keyPositions lists every header and assignment of data in file order, with
// its full key.
func keyPositions(data []byte) []keyPos {
	var out []keyPos
	var table []string
	closing := "" // the delimiter of an open multi-line string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if closing != "" {
			if strings.Count(l, closing)%2 == 1 {
				closing = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "[[") || strings.HasPrefix(l, "["):
			inner := strings.TrimLeft(l, "[")
			k, rest, ok := parseKey(inner)
			if ok && strings.HasPrefix(strings.TrimSpace(rest), "]") {
				table = k
				out = append(out, keyPos{toml.Key(k).String(), n})
			}
		case l == "" || l[0] == '#':
		default:
			k, rest, ok := parseKey(l)
			rest = strings.TrimSpace(rest)
			if !ok || !strings.HasPrefix(rest, "=") {
				continue
			}
			full := append(append([]string{}, table...), k...)
			out = append(out, keyPos{toml.Key(full).String(), n})
			for _, d := range []string{`"""`, `'''`} {
				if strings.Count(rest, d)%2 == 1 {
					closing = d
				}
			}
		}
	}
	return out
}

// parseKey reads a dotted key (bare, "basic" or 'literal' parts) from the
// start of s and returns its parts and what follows it.
func parseKey(s string) (parts []string, rest string, ok bool) {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, "", false
		}
		var part string
		switch s[0] {
		case '"':
			end := closingQuote(s)
			if end < 0 {
				return nil, "", false
			}
			part = unescape(s[1:end])
			s = s[end+1:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, "", false
			}
			part = s[1 : end+1]
			s = s[end+2:]
		default:
			i := 0
			for i < len(s) && isBare(s[i]) {
				i++
			}
			if i == 0 {
				return nil, "", false
			}
			part, s = s[:i], s[i:]
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return parts, s, true
		}
		s = s[1:]
	}
}

func isBare(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// closingQuote returns the index of the '"' that ends the basic string s
// starts with, skipping escaped quotes, or -1.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// unescape handles the escapes a key name can realistically hold; any other
// escape is kept as written, which only costs a line-number miss.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\t`, "\t").Replace(s)
}
