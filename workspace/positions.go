package workspace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/hone-perf/hone/internal/errs"
)

// keyPath is a TOML key split into its parts ("targets", "a", "gates").
type keyPath []string

// String spells the key as a message shows it: dotted, with the parts that
// are not bare keys quoted (targets."a b").
func (k keyPath) String() string {
	parts := make([]string, len(k))
	for i, s := range k {
		parts[i] = s
		if !bareKey(s) {
			parts[i] = strconv.Quote(s)
		}
	}
	return strings.Join(parts, ".")
}

// with returns a new key: k followed by parts.
func (k keyPath) with(parts ...string) keyPath {
	return append(append(keyPath{}, k...), parts...)
}

// under reports whether k is parent or below it.
func (k keyPath) under(parent keyPath) bool {
	if len(k) < len(parent) {
		return false
	}
	for i := range parent {
		if k[i] != parent[i] {
			return false
		}
	}
	return true
}

func bareKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// The kinds of value a file writes, as messages name them.
const (
	kindString     = "a string"
	kindInteger    = "an integer"
	kindFloat      = "a number"
	kindBool       = "true or false"
	kindDate       = "a date"
	kindArray      = "an array"
	kindTable      = "a table"
	kindTableArray = "an array of tables"
)

// keyPos is one header or assignment of hone.toml (a key of an inline
// table included): its full key, the line it starts on, what the file
// writes there (kind, and for an array its elements' kinds), and for a
// [[array]] header which element of the array it opens (0 for the first).
type keyPos struct {
	key   keyPath
	line  int
	kind  string
	elems []string
	item  int
	// Where the key and its value start (line, column), to tell which key
	// a decoder error points at.
	at, value position
}

type position struct{ line, col int }

// keyPositions lists every header and assignment of data in file order,
// read by go-toml's parser, which knows every TOML spelling of a key
// (quoted, dotted, spaced) and every string form a line may hide in. A
// document the parser refuses yields what it read before the error: a
// message about it then has fewer lines to point at, never wrong ones.
func keyPositions(data []byte) []keyPos {
	var out []keyPos
	var table keyPath
	items := map[string]int{} // elements seen of each [[array]]
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		k, at := keyOf(&p, e)
		switch e.Kind {
		case unstable.Table:
			table = k
			out = append(out, keyPos{key: k, line: at.line, kind: kindTable, at: at})
		case unstable.ArrayTable:
			table = k
			s := k.String()
			out = append(out, keyPos{key: k, line: at.line, kind: kindTableArray, item: items[s], at: at})
			items[s]++
		case unstable.KeyValue:
			out = appendValue(out, &p, table.with(k...), at, e.Value())
		}
	}
	return out
}

// appendValue appends the assignment of v to key, and those of the keys of
// v when it is an inline table.
func appendValue(out []keyPos, p *unstable.Parser, key keyPath, at position, v *unstable.Node) []keyPos {
	kp := keyPos{key: key, line: at.line, kind: valueKind(v), at: at}
	if v.Raw.Length > 0 {
		start := p.Shape(v.Raw).Start
		kp.value = position{start.Line, start.Column}
	}
	if v.Kind == unstable.Array {
		for it := v.Children(); it.Next(); {
			kp.elems = append(kp.elems, valueKind(it.Node()))
		}
	}
	out = append(out, kp)
	if v.Kind == unstable.InlineTable {
		for it := v.Children(); it.Next(); {
			kv := it.Node()
			k, kat := keyOf(p, kv)
			out = appendValue(out, p, key.with(k...), kat, kv.Value())
		}
	}
	return out
}

func valueKind(v *unstable.Node) string {
	switch v.Kind {
	case unstable.String:
		return kindString
	case unstable.Integer:
		return kindInteger
	case unstable.Float:
		return kindFloat
	case unstable.Bool:
		return kindBool
	case unstable.Array:
		return kindArray
	case unstable.InlineTable:
		return kindTable
	}
	return kindDate
}

// keyOf returns the dotted key of a header or assignment and where its
// first part starts.
func keyOf(p *unstable.Parser, e *unstable.Node) (keyPath, position) {
	var parts keyPath
	var at position
	for it := e.Key(); it.Next(); {
		n := it.Node()
		if at.line == 0 {
			start := p.Shape(n.Raw).Start
			at = position{start.Line, start.Column}
		}
		parts = append(parts, string(n.Data))
	}
	return parts, at
}

// keyLine finds the line where key is set, for messages: the line that
// assigns it, else the table header that opens it, else the first line that
// sets a key below it (a table made implicitly by dotted keys), else the line
// of its nearest parent (a key left to its default), else 0.
func keyLine(data []byte, key keyPath) int {
	return lineIn(keyPositions(data), key)
}

func lineIn(pos []keyPos, key keyPath) int {
	if len(key) == 0 {
		return 0
	}
	want := key.String()
	below := 0
	for _, kp := range pos {
		if kp.key.String() == want {
			return kp.line
		}
		if below == 0 && kp.key.under(key) {
			below = kp.line
		}
	}
	if below == 0 && len(key) > 1 {
		return lineIn(pos, key[:len(key)-1])
	}
	return below
}

// itemLine is the line of the header of element i of the array of tables
// key ([[key]]), so a message about the third gate points at the third
// gate; keyLine's answer when the file has no such header.
func itemLine(data []byte, key keyPath, i int) int {
	want := key.String()
	pos := keyPositions(data)
	for _, kp := range pos {
		if kp.key.String() == want && kp.item == i && kp.kind == kindTableArray {
			return kp.line
		}
	}
	return lineIn(pos, key)
}

// itemErrf is errf for element i of the array of tables key: the message
// names the array and points at that element's header.
func (p *parser) itemErrf(key keyPath, i int, format string, args ...any) error {
	return lineError(p.file, itemLine(p.data, key, i), key, fmt.Sprintf(format, args...))
}

// lineError formats "file:line: key: msg", leaving out the line when it is
// 0 (the key and all its parents are absent: a default that failed).
func lineError(file string, line int, key keyPath, msg string) error {
	if line > 0 {
		return errs.Invalidf("%s:%d: %s: %s", file, line, key.String(), msg)
	}
	return errs.Invalidf("%s: %s: %s", file, key.String(), msg)
}
