package workspace

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/hone-perf/hone/internal/errs"
)

// keyPos is one header or assignment of hone.toml: its full key, as
// toml.Key.String() spells it, the line it starts on, and for a [[array]]
// header which element of the array it opens (0 for the first).
type keyPos struct {
	key  string
	line int
	item int
}

// keyPositions lists every header and assignment of data in file order,
// read by go-toml's parser, which knows every TOML spelling of a key
// (quoted, dotted, spaced) and every string form a line may hide in. A
// document the parser refuses yields what it read before the error: a
// message about it then has fewer lines to point at, never wrong ones.
func keyPositions(data []byte) []keyPos {
	var out []keyPos
	var table []string
	items := map[string]int{} // elements seen of each [[array]]
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		k, line := keyOf(&p, e)
		switch e.Kind {
		case unstable.Table:
			table = k
			out = append(out, keyPos{key: toml.Key(k).String(), line: line})
		case unstable.ArrayTable:
			table = k
			s := toml.Key(k).String()
			out = append(out, keyPos{key: s, line: line, item: items[s]})
			items[s]++
		case unstable.KeyValue:
			full := append(append([]string{}, table...), k...)
			out = append(out, keyPos{key: toml.Key(full).String(), line: line})
		}
	}
	return out
}

// keyOf returns the dotted key of a header or assignment and the line of
// its first part.
func keyOf(p *unstable.Parser, e *unstable.Node) ([]string, int) {
	var parts []string
	line := 0
	for it := e.Key(); it.Next(); {
		n := it.Node()
		if line == 0 {
			line = p.Shape(n.Raw).Start.Line
		}
		parts = append(parts, string(n.Data))
	}
	return parts, line
}

// keyLine finds the line where key is set, for messages: the line that
// assigns it, else the table header that opens it, else the first line that
// sets a key below it (a table made implicitly by dotted keys), else the line
// of its nearest parent (a key left to its default), else 0.
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

// itemLine is the line of the header of element i of the array of tables
// key ([[key]]), so a message about the third gate points at the third
// gate; keyLine's answer when the file has no such header.
func itemLine(data []byte, key toml.Key, i int) int {
	want := key.String()
	for _, kp := range keyPositions(data) {
		if kp.key == want && kp.item == i && kp.line > 0 {
			return kp.line
		}
	}
	return keyLine(data, key)
}

// itemErrf is errf for element i of the array of tables key: the message
// names the array and points at that element's header.
func (p *parser) itemErrf(key toml.Key, i int, format string, args ...any) error {
	return lineError(p.file, itemLine(p.data, key, i), key, fmt.Sprintf(format, args...))
}

// lineError formats "file:line: key: msg", leaving out the line when it is
// 0 (the key and all its parents are absent: a default that failed).
func lineError(file string, line int, key toml.Key, msg string) error {
	if line > 0 {
		return errs.Invalidf("%s:%d: %s: %s", file, line, key.String(), msg)
	}
	return errs.Invalidf("%s: %s: %s", file, key.String(), msg)
}
