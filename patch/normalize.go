package patch

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Same idea, other words. An optimizer that may not propose an idea twice
// would propose it again with its comments reworded, its lines re-indented
// or its new variables renamed. A patch is therefore also compared by the
// normalised form of what it makes of each file it changes: tokens without
// comments or whitespace, and every identifier the patch declares that the
// file did not have before renamed in order of first appearance. Two
// patches at the same pin whose normalised forms are equal are one idea.

// sourceChange is one file as a patch leaves it: its path, its new mode
// (0 when deleted), its new content, and the identifiers of its content at
// the pin (nil for a new file).
type sourceChange struct {
	path    string
	mode    uint32
	content []byte
	before  map[string]bool
}

// normalizedSHA256 is the hash of a patch's normalised form: its changed
// files in path order, each as normalizeSource gives it.
func normalizedSHA256(changes []sourceChange) string {
	sort.Slice(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	h := sha256.New()
	for _, c := range changes {
		h.Write([]byte(c.path + "\x00" + strconv.FormatUint(uint64(c.mode), 8) + "\x00"))
		if c.mode != 0 {
			h.Write([]byte(normalizeSource(c.path, c.content, c.before)))
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// identifiers is the set of identifiers in content.
func identifiers(name string, content []byte) map[string]bool {
	set := map[string]bool{}
	for _, t := range tokenize(content, commentStyle(name)) {
		if t.kind == tokIdent {
			set[t.text] = true
		}
	}
	return set
}

// normalizeSource is content as tokens, one per line, without comments or
// whitespace, with each identifier that content declares and before does
// not hold replaced by "$n", n counting such identifiers in order of first
// appearance.
func normalizeSource(name string, content []byte, before map[string]bool) string {
	toks := tokenize(content, commentStyle(name))
	kw := keywordsOf(name)
	local := map[string]string{}
	for i, t := range toks {
		if t.kind != tokIdent || before[t.text] || kw[t.text] || local[t.text] != "" {
			continue
		}
		if declares(toks, i) {
			local[t.text] = "$" + strconv.Itoa(len(local)+1)
		}
	}
	var b strings.Builder
	for _, t := range toks {
		s := t.text
		if r, ok := local[s]; ok && t.kind == tokIdent {
			s = r
		}
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String()
}

// declares reports whether the identifier at toks[i] is being declared
// there, in the spellings of the C family, Go, Rust and scripting
// languages: after a type or a declaring keyword (int n, char *p, var n,
// let n, def f), before := (n := 0), or as a parameter name followed by
// its type (f(n int)). A call (memcpy(...)) or a use (return n) is not.
func declares(toks []token, i int) bool {
	next := func(k int) token {
		if i+k < len(toks) {
			return toks[i+k]
		}
		return token{}
	}
	if n := next(1); n.text == ":=" || (n.text == "," && next(2).kind == tokIdent && next(3).text == ":=") {
		return true
	}
	if i == 0 {
		return false
	}
	prev := toks[i-1]
	switch {
	case prev.kind == tokIdent && !nonDeclaring[prev.text]:
		return true
	case prev.text == "*" && i >= 2 && (toks[i-2].kind == tokIdent || toks[i-2].text == "*"):
		return true
	case (prev.text == "(" || prev.text == ",") && next(1).kind == tokIdent:
		return true
	}
	return false
}

// nonDeclaring are words after which an identifier is used, not declared.
var nonDeclaring = map[string]bool{
	"return": true, "case": true, "goto": true, "else": true, "do": true, "sizeof": true, "typeof": true,
	"if": true, "while": true, "for": true, "switch": true, "go": true, "defer": true, "range": true,
	"in": true, "not": true, "and": true, "or": true, "is": true, "throw": true, "yield": true,
	"await": true, "delete": true, "new": true, "echo": true, "print": true, "import": true, "package": true,
}

// Keywords are never renamed: a patch that swaps one for another changed
// its meaning, not its names. Each language has its own, since a keyword
// of one (in, map, type) is a plain identifier in another, which a patch
// could rename.
var (
	cKeywords = words(`auto break case char const continue default do double else enum extern float for goto if
		inline int long register restrict return short signed sizeof static struct switch typedef union
		unsigned void volatile while _Bool _Atomic _Thread_local bool true false class namespace template
		typename public private protected virtual operator this new delete try catch throw using
		constexpr nullptr static_cast reinterpret_cast const_cast dynamic_cast noexcept override final`)
	goKeywords = words(`break case chan const continue default defer else fallthrough for func go goto if
		import interface map package range return select struct switch type var bool byte complex64
		complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32
		uint64 uintptr true false nil iota any`)
	rustKeywords = words(`as async await break const continue crate dyn else enum extern false fn for if impl in
		let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use
		where while i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str`)
	pyKeywords = words(`False None True and as assert async await break class continue def del elif else
		except finally for from global if import in is lambda nonlocal not or pass raise return try while
		with yield`)
)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func keywordsOf(name string) map[string]bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".go":
		return goKeywords
	case ".rs":
		return rustKeywords
	case ".py":
		return pyKeywords
	}
	return cKeywords
}

type tokKind int

const (
	tokPunct tokKind = iota
	tokIdent
	tokNumber
	tokString
)

type token struct {
	kind tokKind
	text string
}

// Comment styles by file name.
const (
	styleC    = iota // // and /* */ (C, C++, Go, Rust, Java, JavaScript, ...)
	styleHash        // # to the end of the line (shell, Python, make, TOML, ...)
	styleNone
)

func commentStyle(name string) int {
	base := path.Base(name)
	switch base {
	case "Makefile", "makefile", "GNUmakefile", "CMakeLists.txt", "meson.build", "Dockerfile":
		return styleHash
	}
	switch strings.ToLower(path.Ext(base)) {
	case ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".inl", ".go", ".rs", ".java", ".js",
		".ts", ".cs", ".swift", ".kt", ".m", ".mm", ".zig", ".scala", ".dart", ".proto":
		return styleC
	case ".py", ".sh", ".bash", ".rb", ".pl", ".mk", ".toml", ".yaml", ".yml", ".cmake", ".r", ".conf", ".cfg":
		return styleHash
	}
	return styleNone
}

// multiPunct are the operators kept as one token, longest first.
var multiPunct = []string{"<<=", ">>=", "...", "::", ":=", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "##", "<-"}

// tokenize splits src into tokens, dropping whitespace and comments of
// the given style. Strings and character literals are one token each,
// escapes included, so their contents count exactly.
func tokenize(src []byte, style int) []token {
	s := string(src)
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case style == styleC && strings.HasPrefix(s[i:], "//"),
			style == styleHash && c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case style == styleC && strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 4
			}
		case c == '"' || c == '\'' || (c == '`' && style == styleC):
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			out = append(out, token{tokString, s[i:j]})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && (isIdentStart(s[j]) || isDigit(s[j])) {
				j++
			}
			out = append(out, token{tokIdent, s[i:j]})
			i = j
		case isDigit(c):
			j := i + 1
			for j < len(s) && (isIdentStart(s[j]) || isDigit(s[j]) || s[j] == '.') {
				j++
			}
			out = append(out, token{tokNumber, s[i:j]})
			i = j
		default:
			n := 1
			for _, p := range multiPunct {
				if strings.HasPrefix(s[i:], p) {
					n = len(p)
					break
				}
			}
			out = append(out, token{tokPunct, s[i : i+n]})
			i += n
		}
	}
	return out
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
