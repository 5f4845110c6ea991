package layout

import (
	"bufio"
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// makefile is what init reads of a Makefile: its variables, its rules and
// which of them are phony. It is a reading of the file's text, not of
// make's database: asking make would run the file's $(shell ...) calls.
type makefile struct {
	vars  map[string]string
	rules map[string][]string // target -> prerequisites
	order []string            // targets in the order of their rules
	phony map[string]bool
	// groups are the targets of each rule line, as written together.
	groups [][]string
	// recipes are each target's recipe lines, without the leading tab.
	recipes map[string][]string
}

var (
	makeVarRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:override\s+|export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*(?:::=|:=|\?=|\+=|!=|=)\s*(.*)$`)
	})
	makeRuleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^\t#:=][^:=]*?)\s*::?\s*([^=]*)$`) })
	makeRefRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$[({]([A-Za-z_][A-Za-z0-9_.]*)[)}]`) })
)

func parseMakefile(text []byte) *makefile {
	m := &makefile{vars: map[string]string{}, rules: map[string][]string{}, phony: map[string]bool{}, recipes: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(text))
	var current []string // the targets whose recipe the tab lines are
	for sc.Scan() {
		line := sc.Text()
		if recipe, ok := strings.CutPrefix(line, "\t"); ok {
			for _, t := range current {
				m.recipes[t] = append(m.recipes[t], strings.TrimSpace(recipe))
			}
			continue
		}
		current = nil
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if v := makeVarRE().FindStringSubmatch(line); v != nil {
			if _, ok := m.vars[v[1]]; !ok {
				m.vars[v[1]] = strings.TrimSpace(v[2])
			}
			continue
		}
		r := makeRuleRE().FindStringSubmatch(line)
		if r == nil {
			continue
		}
		targets, prereqs := strings.Fields(r[1]), strings.Fields(strings.SplitN(r[2], ";", 2)[0])
		m.groups = append(m.groups, targets)
		current = targets
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
		next := makeRefRE().ReplaceAllStringFunc(s, func(ref string) string {
			if v, ok := m.vars[makeRefRE().FindStringSubmatch(ref)[1]]; ok {
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

// goals are what `make` builds: the default goal, or its prerequisites
// when it is phony or `all`.
func (m *makefile) goals() []string {
	goal := m.defaultGoal()
	cands := goal
	if m.phony[goal] || goal == "all" {
		cands = strings.Join(m.rules[goal], " ")
	}
	v, ok := m.expand(cands)
	if !ok {
		return nil
	}
	return strings.Fields(v)
}

// program is the executable the default goal builds: the goal itself when
// it names a file without an extension, else the first such prerequisite
// of it (as in `all: prog`).
func (m *makefile) program() string {
	for _, f := range m.goals() {
		if !m.phony[f] && looksLikeProgram(f) {
			return f
		}
	}
	return ""
}

var subMakeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[@+-]*\$[({]MAKE[)}]\s+-C\s+(\S+)\s*(.*)$`) })

// subProgram finds the executable of a project whose top Makefile only
// hands its goals to the Makefiles of its directories (lz4's `lz4-release:
// $(MAKE) -C programs $@`, or, in older releases, a default goal whose
// recipe runs `@$(MAKE) -C $(PRGDIR)` itself): the program that sub-make
// builds for the goal, as a path relative to the top Makefile's directory.
func (p *project) subProgram(m *makefile) string {
	for _, goal := range append([]string{m.defaultGoal()}, m.goals()...) {
		for _, line := range m.recipes[goal] {
			sm := subMakeRE().FindStringSubmatch(line)
			if sm == nil {
				continue
			}
			dir, ok := m.expand(sm[1])
			if !ok || !shellSafe(dir) || strings.HasPrefix(dir, "/") || strings.Contains(dir, "..") || inDataDir(dir) {
				continue
			}
			sub := parseMakefile(p.read(join(p.dir, join(dir, "Makefile"))))
			if prog := sub.builds(strings.ReplaceAll(strings.TrimSpace(sm[2]), "$@", goal)); prog != "" {
				return dir + "/" + prog
			}
		}
	}
	return ""
}

// builds is the program a make of goal builds: goal itself, or the first
// program of what a phony goal or one without a recipe names (lz4's
// `lz4-release: lz4`, `default: lz4-release`), or of the targets written
// with it (`lz4 lz4-release: ...`); for no goal, the default goal's. A
// program is a target with a recipe: `lib-release: liblz4.a` only names
// what to build.
func (m *makefile) builds(goal string) string {
	if goal == "" {
		goal = m.defaultGoal()
	}
	return m.buildsFrom(goal, map[string]bool{})
}

func (m *makefile) buildsFrom(goal string, seen map[string]bool) string {
	isProg := func(t string) bool { return !m.phony[t] && looksLikeProgram(t) && len(m.recipes[t]) > 0 }
	if seen[goal] {
		return ""
	}
	seen[goal] = true
	if isProg(goal) {
		return goal
	}
	for _, g := range m.groups {
		if slices.Contains(g, goal) {
			if i := slices.IndexFunc(g, isProg); i >= 0 {
				return g[i]
			}
		}
	}
	if m.phony[goal] || len(m.recipes[goal]) == 0 {
		for _, t := range m.rules[goal] {
			if prog := m.buildsFrom(t, seen); prog != "" {
				return prog
			}
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

// testTarget is the target that runs the project's tests, or "". check,
// GNU's name for it, comes first: where both exist, test is often the long
// suite (lz4's runs for hours, its check for a minute).
func (m *makefile) testTarget() string {
	for _, t := range []string{"check", "test", "tests"} {
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
	prog := mf.program()
	if prog == "" {
		prog = p.subProgram(mf)
	}
	if prog != "" {
		withProgram(l, progPath(dir, prog))
		l.Name = prog[strings.LastIndexByte(prog, '/')+1:]
	}
	p.protect(l, "GNUmakefile", "makefile", "Makefile", "**/*.mk")
	l.Files = p.sourceGlobs(p.path, ".", cExts...)
	l.Sanitize = []string{"address", "undefined"}
}

// cExts are the source files of C and C++ projects.
var cExts = []string{".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"}
