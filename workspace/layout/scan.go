package layout

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// dataDirs are directory names that hold tests, their data and benchmark
// harnesses or inputs. A patch that could change them could make a gate
// pass or a bench cheaper without making the code faster, so they are kept
// out of the allowlist wherever they appear directly in the target's path.
var dataDirs = map[string]bool{
	"test": true, "tests": true, "testdata": true, "testing": true, "t": true,
	"bench": true, "benches": true, "benchmark": true, "benchmarks": true,
	"fuzz": true, "fuzzing": true, "fuzzers": true, "ossfuzz": true,
	"corpus": true, "corpora": true, "fixtures": true, "golden": true,
}

// protectedDirs lists the data directories directly in the target's path, as
// patterns relative to it.
func (p *project) protectedDirs() []string {
	ents, err := os.ReadDir(p.host(p.path))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && dataDirs[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out
}

// maxScan bounds how many entries a walk of the target reads: init must
// stay quick on a large repository, and the first few thousand files tell
// which languages it holds.
const maxScan = 20000

// sourceGlobs returns a files glob ("**/*.c", or under for sub, "src/**/*.rs")
// for each extension in exts that a file under the repository-relative dir
// has, skipping data, hidden and vendored directories. sub is dir relative
// to the target's path.
func (p *project) sourceGlobs(dir, sub string, exts ...string) []string {
	have := map[string]bool{}
	walkFiles(p.host(dir), func(name string) bool { return hidden(name) || skipDirs[name] || dataDirs[name] }, func(rel string) {
		have[path.Ext(rel)] = true
	})
	var globs []string
	for _, e := range exts {
		if have[e] {
			globs = append(globs, join(sub, "**/*"+e))
		}
	}
	return globs
}

// walkFiles calls visit with the slash path, relative to the host
// directory base, of each regular file below it, skipping the directories
// whose name skip accepts (never base itself), and reading maxScan entries
// at most.
func walkFiles(base string, skip func(name string) bool, visit func(rel string)) {
	n := 0
	_ = filepath.WalkDir(base, func(f string, d fs.DirEntry, err error) error {
		switch n++; {
		case n > maxScan:
			return filepath.SkipAll
		case err != nil:
			return nil
		case d.IsDir():
			if f != base && skip(d.Name()) {
				return filepath.SkipDir
			}
		case d.Type().IsRegular():
			rel, _ := filepath.Rel(base, f)
			visit(filepath.ToSlash(rel))
		}
		return nil
	})
}

// hidden reports whether a directory's name hides it from the build.
func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// filesMatching lists the names directly in the repository-relative dir
// that match the shell pattern pat, sorted.
func (p *project) filesMatching(dir, pat string) []string {
	m, _ := filepath.Glob(filepath.Join(p.host(dir), pat))
	var out []string
	for _, f := range m {
		if isFile(f) {
			out = append(out, filepath.Base(f))
		}
	}
	sort.Strings(out)
	return out
}

func (p *project) read(rel string) []byte {
	b, _ := os.ReadFile(p.host(rel))
	return b
}

// script renders steps as one shell command: a single line when it can
// stay one, else one step a line after `set -e` (so the first failing step
// fails the command) with env exported first.
func script(env []string, steps ...string) string {
	if len(steps) == 1 {
		return strings.Join(append(env[:len(env):len(env)], steps[0]), " ")
	}
	lines := []string{"set -e"}
	for _, kv := range env {
		lines = append(lines, "export "+kv)
	}
	return strings.Join(append(lines, steps...), "\n") + "\n"
}

// shellSafe reports whether s needs no quoting in sh.
func shellSafe(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./+@%:=,", c)) {
			return false
		}
	}
	return s != ""
}

// shellQuote quotes s for sh when it needs it.
func shellQuote(s string) string {
	if shellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
