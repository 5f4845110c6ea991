package benchformat

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hone-perf/hone/internal/errs"
)

// word is one argument of a simple command in a bench command.
type word struct {
	// text is the argument's value when lit; otherwise the literal text
	// before the first expansion, so a flag's name is still recognised.
	text       string
	lit        bool
	start, end int // byte offsets in the command
}

// calls parses command as /bin/sh would and returns the arguments of each
// simple command in it, in order.
func calls(command string) ([][]word, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, errs.Invalidf("the bench command is not valid shell: %v", err)
	}
	var out [][]word
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		ws := make([]word, len(c.Args))
		for i, a := range c.Args {
			text, lit := literal(a)
			ws[i] = word{text: text, lit: lit, start: int(a.Pos().Offset()), end: int(a.End().Offset())}
		}
		out = append(out, ws)
		return true
	})
	return out, nil
}

// literal returns the value of a word with no expansion in it, or with ok
// false the value of its literal start.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				return b.String(), false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return b.String(), false
				}
				b.WriteString(unescape(l.Value, true))
			}
		default:
			return b.String(), false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes the shell removes: before any byte
// outside quotes, and before $ ` " \ and newline inside double quotes.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// quote returns s as one shell word.
func quote(s string) string {
	q, err := syntax.Quote(s, syntax.LangPOSIX)
	if err != nil {
		// Only control bytes make POSIX quoting fail; a benchmark name
		// never holds one, and single quotes still keep them whole.
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return q
}

// edit is a change to a command: the bytes [start, end) are replaced by text.
type edit struct {
	start, end int
	text       string
}

// apply makes non-overlapping edits, given in any order.
func apply(command string, edits []edit) string {
	var b strings.Builder
	pos := 0
	for len(edits) > 0 {
		first := 0
		for i, e := range edits {
			if e.start < edits[first].start || (e.start == edits[first].start && e.end < edits[first].end) {
				first = i
			}
		}
		e := edits[first]
		edits = append(edits[:first:first], edits[first+1:]...)
		b.WriteString(command[pos:e.start])
		b.WriteString(e.text)
		pos = e.end
	}
	b.WriteString(command[pos:])
	return b.String()
}
