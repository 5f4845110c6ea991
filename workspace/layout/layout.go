// Package layout finds how a project builds, tests and runs, for `hone
// init`: its build system (make, CMake, Cargo, Go modules or Meson), where
// the sources a target may change are, and commands that work the way hone
// runs them: in the jail (see internal/jail), in <checkout>/<path>, with the
// checkout at $HONE_ROOT and the build output at $HONE_OUT, both writable
// for the build; gates and bench runs get a private copy of the checkout
// and $HONE_OUT read-only.
//
// It reads files and asks the host where its tools live; it never runs the
// project's own code.
package layout

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hone-perf/hone/internal/errs"
)

// The build systems, as Layout.System names them.
const (
	Make  = "make"
	CMake = "cmake"
	Cargo = "cargo"
	Go    = "go"
	Meson = "meson"
)

// buildFiles are the files that name a build system, most specific first:
// a Makefile next to a go.mod or a CMakeLists.txt is usually a wrapper.
var buildFiles = []struct{ system, file string }{
	{Cargo, "Cargo.toml"},
	{Go, "go.mod"},
	{Meson, "meson.build"},
	{CMake, "CMakeLists.txt"},
	{Make, "GNUmakefile"},
	{Make, "makefile"},
	{Make, "Makefile"},
}

// detectors fill in a Layout for each build system.
var detectors = map[string]func(*project, *Layout){Make: detectMake, CMake: detectCMake, Cargo: detectCargo, Go: detectGo, Meson: detectMeson}

// Layout is what was found for one target and the commands written for it.
type Layout struct {
	System string `json:"-"`
	// BuildFile is the file that named the system, relative to the
	// repository top level.
	BuildFile string `json:"build_file"`
	// Path is the target's path: the project's directory, or, for a project
	// at the top level, the subdirectory holding its sources (a target
	// cannot be the whole repository).
	Path string `json:"path"`
	// Name is a target name taken from the project (package, module or
	// project name, else the directory).
	Name  string   `json:"name"`
	Build *Command `json:"build"`
	Gates []*Gate  `json:"gates"`
	// Bench is nil when nothing was found to run: the user must write it.
	Bench *Bench `json:"bench,omitempty"`
	// Sanitize is what a sanitizer gate would ask for (a gate's
	// `sanitize` key, written commented: the pin must pass it first).
	Sanitize []string `json:"sanitize,omitempty"`
	Protect  []string `json:"protect"`
	Files    []string `json:"files,omitempty"`
	// ReadOnly lists toolchain directories outside the system directories
	// that the jail must be able to read ([sandbox] read_only).
	ReadOnly []string `json:"read_only,omitempty"`
	// Todo says what the user must still do, one sentence each.
	Todo []string `json:"-"`
	// Notes explain the layout's choices, as comments above the target.
	Notes []string `json:"-"`

	benchTodo bool // Todo already says why the bench must be written
}

// Command is a shell command with the comment lines that explain it.
type Command struct {
	Run string   `json:"run"`
	Why []string `json:"-"`
}

// Gate is one gate of the target.
type Gate struct {
	Name        string   `json:"name"`
	Run         string   `json:"run"`
	Equivalence bool     `json:"equivalence,omitempty"`
	Why         []string `json:"-"`
}

// Bench is the measured workload.
type Bench struct {
	Run string `json:"run"`
	// Format is the bench format ("go" for a `go test` benchmark binary),
	// "" for a process.
	Format string   `json:"format,omitempty"`
	Why    []string `json:"-"`
}

// Find returns the layout of the target at path (repository-relative,
// slash-separated), or, when path is empty, of the one project the
// repository holds: at its top level or in a single subdirectory (two
// levels deep at most). It returns nil when no build system is found.
// A choice init cannot make (several projects, sources at the top level)
// is a Usage error that says which --path to pass.
func Find(root, target string) (*Layout, error) {
	proj, sys, file := "", "", ""
	if target != "" {
		for d := target; ; d = path.Dir(d) {
			if sys, file = systemAt(root, d); sys != "" {
				proj = d
				break
			}
			if d == "." {
				return nil, nil
			}
		}
	} else {
		var err error
		if proj, sys, file, err = discover(root); err != nil || sys == "" {
			return nil, err
		}
		if proj == "." {
			if target = sourceDir(root, sys); target == "" {
				target = "."
			}
		} else {
			target = proj
		}
	}
	p := &project{root: root, dir: proj, path: target, file: join(proj, file)}
	l := &Layout{System: sys, BuildFile: p.file, Path: target}
	detectors[sys](p, l)
	if target == "." {
		if l.Files = topSources(root, sys); len(l.Files) == 0 {
			return nil, errs.Usagef("found %s at the repository top level, but no source file there to optimize; pass --path DIR naming the directory that holds the sources", join(proj, file))
		}
		l.Notes = append(l.Notes, "The sources sit at the repository's top level, so the target is the top level",
			"and only the files listed in files may change: hone.toml, .hone/ and .git*",
			"never may, nor a program's main file (a test or a harness).")
	}
	if l.Name == "" {
		l.Name = path.Base(proj)
		if proj == "." {
			l.Name = filepath.Base(root)
		}
	}
	l.Name = TargetName(l.Name)
	for _, d := range p.protectedDirs() {
		l.Protect = appendNew(l.Protect, d+"/**")
	}
	sort.Strings(l.Protect)
	l.ReadOnly = p.ro
	if len(p.pathDir) > 0 {
		l.Notes = append(l.Notes, "Commands put "+strings.Join(p.pathDir, ", ")+" first on PATH: the jail's own", "PATH ("+strings.Join(jailPath(), ":")+") does not reach "+plural(len(p.pathDir), "it", "them")+".")
	}
	seedTodo(l)
	l.Todo = append(p.tools.todo(), l.Todo...)
	if !slices.ContainsFunc(l.Gates, func(g *Gate) bool { return g.Equivalence }) {
		l.Todo = append(l.Todo, "write the equivalence gate marked FILL IN in hone.toml: no program was found whose output shows the result of the work")
	}
	if l.Bench == nil && !l.benchTodo {
		l.Todo = append(l.Todo, "write the bench marked FILL IN in hone.toml: no program or benchmark harness was found to measure")
	}
	return l, nil
}

// project is what every system's detection reads.
type project struct {
	root string // the repository top level, a host path
	dir  string // the directory of the build file, repository-relative
	path string // the target's path
	file string // the build file, repository-relative
	tools
}

// host returns the host path of a repository-relative path.
func (p *project) host(rel string) string { return filepath.Join(p.root, filepath.FromSlash(rel)) }

// fromPath returns how a command running in the target's path names the
// repository-relative directory dir: "." for the path itself.
func (p *project) fromPath(dir string) string {
	switch {
	case dir == p.path:
		return "."
	case dir == ".":
		return "$HONE_ROOT"
	}
	return "$HONE_ROOT/" + shellQuote(dir)
}

// inPath returns rel (relative to the project directory) relative to the
// target's path, and whether it lies inside it. Protect patterns and files
// globs are relative to the path.
func (p *project) inPath(rel string) (string, bool) {
	full := join(p.dir, rel)
	if p.path == "." {
		return full, true
	}
	if full == p.path {
		return ".", true
	}
	r, ok := strings.CutPrefix(full, p.path+"/")
	return r, ok
}

// protect adds patterns (relative to the project directory) that fall
// inside the target's path to l.Protect. A "**/" pattern covers every
// directory below the project's, the target's path among them.
func (p *project) protect(l *Layout, patterns ...string) {
	for _, pat := range patterns {
		if strings.HasPrefix(pat, "**/") {
			l.Protect = appendNew(l.Protect, pat)
		} else if r, ok := p.inPath(pat); ok && r != "." {
			l.Protect = appendNew(l.Protect, r)
		}
	}
}

func systemAt(root, dir string) (system, file string) {
	for _, b := range buildFiles {
		if isFile(filepath.Join(root, filepath.FromSlash(dir), b.file)) {
			return b.system, b.file
		}
	}
	return "", ""
}

// discover finds the one project of the repository: at the top level, else
// the shallowest directories with a build file, two levels down at most.
func discover(root string) (dir, system, file string, err error) {
	if system, file = systemAt(root, "."); system != "" {
		return ".", system, file, nil
	}
	var found []string
	for _, d := range subdirs(root, ".") {
		if s, _ := systemAt(root, d); s != "" {
			found = append(found, d)
			continue
		}
		for _, dd := range subdirs(root, d) {
			if s, _ := systemAt(root, dd); s != "" {
				found = append(found, dd)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", "", "", nil
	case 1:
		system, file = systemAt(root, found[0])
		return found[0], system, file, nil
	}
	if len(found) > 4 {
		found = append(found[:4], "...")
	}
	return "", "", "", errs.Usagef("found several projects (%s); pass --path DIR to choose the target", strings.Join(found, ", "))
}

// skipDirs are never a project or a source directory of one.
var skipDirs = map[string]bool{"vendor": true, "node_modules": true, "third_party": true, "build": true, "target": true, "out": true, "dist": true}

// subdirs lists the directories directly in the repository-relative dir
// that could hold a project, sorted.
func subdirs(root, dir string) []string {
	ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || skipDirs[n] || dataDirs[n] {
			continue
		}
		out = append(out, join(dir, n))
	}
	return out
}

// sourceDir is the subdirectory of a top-level project that holds its
// sources, or "".
func sourceDir(root, system string) string {
	cands := []string{"src", "lib", "source"}
	if system == Go {
		return goSourceDir(root)
	}
	for _, d := range cands {
		if isDir(filepath.Join(root, d)) {
			return d
		}
	}
	return ""
}

// topSources lists the source files of a project at the top level by
// name, for a target whose path is the top level: the files a patch may
// change. Tests, benchmarks, fuzzers and examples, by their names, and C
// or C++ files that define main (a program, a test or a harness) are left
// out.
func topSources(root, system string) []string {
	exts := cExts
	switch system {
	case Go:
		exts = []string{".go"}
	case Cargo:
		exts = []string{".rs"}
	}
	ents, _ := os.ReadDir(root)
	var out []string
	for _, e := range ents {
		name, low := e.Name(), strings.ToLower(e.Name())
		if !e.Type().IsRegular() || !slices.Contains(exts, path.Ext(name)) || notSource().MatchString(low) {
			continue
		}
		if slices.Contains(cExts, path.Ext(name)) && definesMain(filepath.Join(root, name)) {
			continue
		}
		out = append(out, name)
	}
	return out
}

var notSource = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`test|bench|fuzz|example|demo|sample`) })

func join(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	if name == "." || name == "" {
		return dir
	}
	return dir + "/" + name
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// TargetName makes a project or directory name a valid target name: letters, digits,
// '_' and '-'.
func TargetName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	if n := strings.Trim(string(b), "-"); n != "" {
		return n
	}
	return "target"
}
