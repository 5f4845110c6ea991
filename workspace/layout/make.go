package layout

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
)

// makefile is what init reads of a Makefile: its variables, its rules and
// which of them are phony. It is a reading of the file's text, not of
// make's database: asking make would run the file's $(shell ...) calls.
type makefile struct {
	vars  map[string]string
	rules map[string][]string // target -> prerequisites
	order []string            // targets in the order of their rules
	phony map[string]bool
}

var (
	makeVarRE  = regexp.MustCompile(`^(?:override\s+|export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*(?:::=|:=|\?=|\+=|!=|=)\s*(.*)$`)
	makeRuleRE = regexp.MustCompile(`^([^\t#:=][^:=]*?)\s*::?\s*([^=]*)$`)
	makeRefRE  = regexp.MustCompile(`\$[({]([A-Za-z_][A-Za-z0-9_.]*)[)}]`)
)

func parseMakefile(text []byte) *makefile {
	m := &makefile{vars: map[string]string{}, rules: map[string][]string{}, phony: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") {
			continue
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if v := makeVarRE.FindStringSubmatch(line); v != nil {
			if _, ok := m.vars[v[1]]; !ok {
				m.vars[v[1]] = strings.TrimSpace(v[2])
			}
			continue
		}
		r := makeRuleRE.FindStringSubmatch(line)
		if r == nil {
			continue
		}
		targets, prereqs := strings.Fields(r[1]), strings.Fields(strings.SplitN(r[2], ";", 2)[0])
		for _, t := range targets {
			if t == ".PHONY" {
				for _, p := range prereqs {
					m.phony[p] = true
				}
				continue
			}
			if _, ok := m.rules[t]; !ok {
				m.order = append(m.order, t)
			}
			m.rules[t] = append(m.rules[t], prereqs...)
		}
	}
	return m
}

// expand replaces variable references it can resolve; ok is false when
// one remains.
func (m *makefile) expand(s string) (string, bool) {
	for range 8 {
		next := makeRefRE.ReplaceAllStringFunc(s, func(ref string) string {
			if v, ok := m.vars[makeRefRE.FindStringSubmatch(ref)[1]]; ok {
				return v
			}
			return ref
		})
		if next == s {
			break
		}
		s = next
	}
	return s, !strings.Contains(s, "$")
}

// defaultGoal is the target of the first rule, which `make` builds.
func (m *makefile) defaultGoal() string {
	for _, t := range m.order {
		if !strings.HasPrefix(t, ".") && !strings.Contains(t, "%") {
			return t
		}
	}
	return ""
}

// program is the executable the default goal builds: the goal itself when
// it names a file without an extension, else the first such prerequisite
// of it (as in `all: prog`).
func (m *makefile) program() string {
	goal := m.defaultGoal()
	cands := goal
	if m.phony[goal] || goal == "all" {
		cands = strings.Join(m.rules[goal], " ")
	}
	v, ok := m.expand(cands)
	if !ok {
		return ""
	}
	for _, f := range strings.Fields(v) {
		if !m.phony[f] && looksLikeProgram(f) {
			return f
		}
	}
	return ""
}

// looksLikeProgram accepts a relative file name with no extension, such
// as "wordfreq" or "bin/wordfreq".
func looksLikeProgram(f string) bool {
	base := f[strings.LastIndexByte(f, '/')+1:]
	switch {
	case !shellSafe(f), strings.HasPrefix(f, "/"), strings.Contains(f, ".."), strings.Contains(base, "."):
		return false
	case base == "all", base == "install", base == "clean", base == "test", base == "check":
		return false
	}
	return true
}

// testTarget is the target that runs the project's tests, or "".
func (m *makefile) testTarget() string {
	for _, t := range []string{"test", "check", "tests"} {
		if _, ok := m.rules[t]; ok {
			return t
		}
	}
	return ""
}

func detectMake(p *project, l *Layout) {
	mf := parseMakefile(p.read(p.file))
	p.need("make", "cc")
	dir := p.fromPath(p.dir)
	mk := "make"
	if dir != "." {
		mk = "make -C " + dir
	}
	l.Build = &Command{Run: script(p.env(), mk), Why: []string{
		"make builds in the checkout, which is writable during the build; the",
		"post-build checkout is what gates and bench runs get a private copy of.",
		"It must not write into protected paths: build test programs in the test target.",
	}}
	if t := mf.testTarget(); t != "" {
		l.Gates = append(l.Gates, &Gate{Name: "unit", Run: script(p.env(), mk+" "+t), Why: []string{
			"The project's own tests. They run in a private copy of the built",
			"checkout, so `make " + t + "` may build and write there.",
		}})
	} else {
		l.Todo = append(l.Todo, "add a gate that runs the tests: "+p.file+" has no test or check target")
	}
	if prog := mf.program(); prog != "" {
		withProgram(l, progPath(dir, prog))
		l.Name = prog[strings.LastIndexByte(prog, '/')+1:]
	}
	p.protect(l, "GNUmakefile", "makefile", "Makefile", "**/*.mk")
	l.Files = p.sourceGlobs(p.path, ".", cExts...)
	l.Sanitize = []string{"address", "undefined"}
}

// cExts are the source files of C and C++ projects.
var cExts = []string{".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"}
