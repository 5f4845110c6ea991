package jail

import "strings"

// plainWords splits command into the argv a shell would build, when the
// shell adds nothing but word splitting: plain words, single quotes,
// double quotes without specials, and $NAME or ${NAME} whose value (from
// lookup, the command's own environment) survives unquoted use unchanged.
// ok is false for anything else (pipes, redirections, lists, globs,
// assignments, substitutions, backslashes, newlines, ~, builtins and
// keywords), which then runs under /bin/sh -c. Starting a shell costs more
// CPU than a short workload's difference, and that cost would land in every
// sample.
func plainWords(command string, lookup func(string) (string, bool)) (argv []string, ok bool) {
	if _, set := lookup("IFS"); set {
		return nil, false
	}
	var (
		cur    strings.Builder
		inWord bool
	)
	flush := func() {
		if inWord {
			argv = append(argv, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(command); {
		c := command[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
			i++
		case c == '\'':
			end := strings.IndexByte(command[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			cur.WriteString(command[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '"':
			n, ok := doubleQuoted(command[i:], &cur, lookup)
			if !ok {
				return nil, false
			}
			inWord = true
			i += n
		case c == '$':
			v, n, ok := expansion(command[i:], lookup)
			if !ok || v == "" || strings.ContainsAny(v, " \t\n*?[") {
				return nil, false
			}
			cur.WriteString(v)
			inWord = true
			i += n
		case plainByte(c):
			cur.WriteByte(c)
			inWord = true
			i++
		default:
			return nil, false
		}
	}
	flush()
	if len(argv) == 0 || strings.Contains(argv[0], "=") || shellOwned[argv[0]] {
		return nil, false
	}
	return argv, true
}

// doubleQuoted reads a "..." section at the start of s into cur and returns
// its length. Backslashes and backquotes are refused rather than emulated.
func doubleQuoted(s string, cur *strings.Builder, lookup func(string) (string, bool)) (int, bool) {
	for i := 1; i < len(s); {
		switch c := s[i]; c {
		case '"':
			return i + 1, true
		case '\\', '`':
			return 0, false
		case '$':
			v, n, ok := expansion(s[i:], lookup)
			if !ok {
				return 0, false
			}
			cur.WriteString(v)
			i += n
		default:
			cur.WriteByte(c)
			i++
		}
	}
	return 0, false
}

// expansion reads $NAME or ${NAME} at the start of s. Any other form
// (special parameters, ${NAME:-x}, $(...)) and unset names are refused.
func expansion(s string, lookup func(string) (string, bool)) (value string, n int, ok bool) {
	braced := len(s) > 1 && s[1] == '{'
	start := 1
	if braced {
		start = 2
	}
	end := start
	for end < len(s) && nameByte(s[end], end == start) {
		end++
	}
	if end == start {
		return "", 0, false
	}
	n = end
	if braced {
		if end >= len(s) || s[end] != '}' {
			return "", 0, false
		}
		n++
	}
	value, ok = lookup(s[start:end])
	return value, n, ok
}

func nameByte(c byte, first bool) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}

func plainByte(c byte) bool {
	return nameByte(c, false) || strings.IndexByte("-./,:=+@%", c) >= 0
}

// shellOwned are dash's reserved words and builtins: as a command name they
// mean something other than the program of that name (dash's echo is not
// /bin/echo), so such commands run under the shell.
var shellOwned = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`! { } case do done elif else esac fi for if in then until while
		. : [ alias bg break cd chdir command continue echo eval exec exit export false fc fg
		getopts hash jobs kill local printf pwd read readonly return set shift test times trap
		true type ulimit umask unalias unset wait`) {
		m[w] = true
	}
	return m
}()

// Quote makes s one word for /bin/sh, whatever it contains.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
