package layout

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// buildFileIn is a build file of a project, with its directory relative to
// the project's.
type buildFileIn struct {
	dir  string
	text string
}

// collect reads every file called name under the project directory,
// shallowest first, skipping hidden, vendored and build directories, with
// comments (from commentRE) removed.
func (p *project) collect(name string, commentRE *regexp.Regexp) []buildFileIn {
	var out []buildFileIn
	base := p.host(p.dir)
	walkFiles(base, func(d string) bool { return hidden(d) || skipDirs[d] }, func(rel string) {
		if path.Base(rel) != name {
			return
		}
		b, _ := os.ReadFile(filepath.Join(base, filepath.FromSlash(rel)))
		out = append(out, buildFileIn{dir: path.Dir(rel), text: commentRE.ReplaceAllString(string(b), "")})
	})
	sort.SliceStable(out, func(i, j int) bool { return depth(out[i].dir) < depth(out[j].dir) })
	return out
}

func depth(dir string) int {
	if dir == "." {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

// inDataDir reports whether a project-relative directory is, or is inside,
// a directory of tests or benchmarks.
func inDataDir(dir string) bool {
	for _, seg := range strings.Split(dir, "/") {
		if dataDirs[seg] {
			return true
		}
	}
	return false
}

// isHarnessName reports whether an executable's name says it is a test or
// a benchmark rather than the program.
func isHarnessName(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "test") || strings.Contains(n, "bench")
}

var (
	cmakeCommentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)#.*$`) })
	cmakeProjectRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bproject\s*\(\s*([A-Za-z0-9_.+-]+)`) })
	cmakeExeRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\badd_executable\s*\(\s*([^\s)]+)([^)]*)\)`) })
	cmakeTestRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\badd_test\s*\(([^)]*)\)`) })
	genexTargetRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$<TARGET_FILE:([^>]+)>$`) })
	// A configure step that writes where the sources are: file() with a
	// writing mode, or configure_file() whose output names the source
	// directory.
	cmakeWritesSourceRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?is)\b(file\s*\(\s*(?:RENAME|WRITE|APPEND|COPY|REMOVE|REMOVE_RECURSE|TOUCH|GENERATE)\b[^)]*|configure_file\s*\(\s*\S+\s+)\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR)\}`)
	})
)

// sourceWrite is a CMakeLists.txt whose configure changes the source tree.
type sourceWrite struct{ dir, what string }

// writesSourceTree finds the first CMakeLists.txt that writes into the
// source directory when configured (zlib's renames the tracked zconf.h).
func writesSourceTree(files []buildFileIn) (sourceWrite, bool) {
	for _, f := range files {
		if m := cmakeWritesSourceRE().FindStringSubmatch(f.text); m != nil {
			what := strings.Join(strings.Fields(m[1]), " ")
			if i := strings.IndexByte(what, '('); i > 0 {
				what = strings.TrimSpace(what[:i])
			}
			return sourceWrite{dir: f.dir, what: what + "()"}, true
		}
	}
	return sourceWrite{}, false
}

func detectCMake(p *project, l *Layout) {
	files := p.collect("CMakeLists.txt", cmakeCommentRE())
	p.need("cmake", "ctest", "make", "cc")
	src := p.fromPath(p.dir)
	l.Build = &Command{Run: script(p.env(),
		"cmake -S "+src+" -B $HONE_OUT/build -DCMAKE_BUILD_TYPE=RelWithDebInfo",
		"cmake --build $HONE_OUT/build"), Why: []string{
		"Configure and build out of the source tree, in $HONE_OUT/build.",
		"RelWithDebInfo optimizes (-O2) and keeps line information for `hone profile`.",
	}}
	if f, ok := writesSourceTree(files); ok {
		// hone refuses a build that changes a tracked file, so such a
		// configure runs on a copy; the prefix map keeps the debug
		// information naming the checkout's files, for `hone profile`.
		l.Build = &Command{Run: script(p.env(),
			"rm -rf $HONE_OUT/src && cp -a "+src+"/. $HONE_OUT/src",
			`cmake -S $HONE_OUT/src -B $HONE_OUT/build -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS=-ffile-prefix-map=$HONE_OUT/src=$(cd `+src+` && pwd)" "-DCMAKE_CXX_FLAGS=-ffile-prefix-map=$HONE_OUT/src=$(cd `+src+` && pwd)"`,
			"cmake --build $HONE_OUT/build"), Why: []string{
			join(f.dir, "CMakeLists.txt") + " changes files of the source tree when it configures (" + f.what + "),",
			"so the build configures a copy of the tree in $HONE_OUT/src, out of that tree, in $HONE_OUT/build.",
			"RelWithDebInfo optimizes (-O2) and keeps line information for `hone profile`.",
		}}
	}
	tested := map[string]bool{}
	hasTests := false
	for _, f := range files {
		if m := cmakeProjectRE().FindStringSubmatch(f.text); m != nil && l.Name == "" {
			l.Name = m[1]
		}
		for _, m := range cmakeTestRE().FindAllStringSubmatch(f.text, -1) {
			hasTests = true
			args := strings.Fields(m[1])
			cmd := ""
			for i, a := range args {
				if strings.EqualFold(a, "COMMAND") && i+1 < len(args) {
					cmd = args[i+1]
					break
				}
			}
			if cmd == "" && len(args) > 1 && !strings.EqualFold(args[0], "NAME") {
				cmd = args[1]
			}
			if g := genexTargetRE().FindStringSubmatch(cmd); g != nil {
				cmd = g[1]
			}
			tested[cmd] = true
		}
	}
	if hasTests {
		p.buildTreeGate(l, "ctest --test-dir /tmp/build --output-on-failure", "The project's CTest tests.")
	} else {
		l.Todo = append(l.Todo, "add a gate that runs the tests: no CMakeLists.txt calls add_test")
	}
	if dir, exe := cmakeProgram(files, tested); exe != "" {
		withProgram(l, "$HONE_OUT/build/"+join(dir, exe))
	}
	p.protect(l, "**/CMakeLists.txt", "**/*.cmake", "CMakePresets.json", "CMakeUserPresets.json")
	l.Files = p.sourceGlobs(p.path, ".", cExts...)
	l.Sanitize = []string{"address", "undefined"}
}

// cmakeProgram returns the first executable, shallowest CMakeLists.txt
// first, that no test runs and that is neither named nor placed as a test
// or benchmark, with the directory CMake builds it in.
func cmakeProgram(files []buildFileIn, tested map[string]bool) (dir, exe string) {
	for _, f := range files {
		if inDataDir(f.dir) {
			continue
		}
		for _, m := range cmakeExeRE().FindAllStringSubmatch(f.text, -1) {
			name, args := m[1], strings.ToUpper(m[2])
			if tested[name] || isHarnessName(name) || !shellSafe(name) || strings.Contains(args, "IMPORTED") || strings.Contains(args, "ALIAS") {
				continue
			}
			return f.dir, name
		}
	}
	return "", ""
}

// buildTreeGate adds the unit gate of a project built in $HONE_OUT/build
// whose test runner writes its logs into the build tree.
func (p *project) buildTreeGate(l *Layout, test, what string) {
	l.Gates = append(l.Gates, &Gate{Name: "unit", Run: script(p.env(), "cp -a $HONE_OUT/build /tmp/build", test), Why: []string{
		what + " $HONE_OUT is read-only after the build and the test",
		"runner writes its logs into the build tree, so it runs on a copy in /tmp.",
	}})
}
