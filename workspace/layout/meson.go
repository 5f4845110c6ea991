package layout

import (
	"regexp"
	"sync"
)

var (
	mesonCommentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)#.*$`) })
	mesonProjectRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bproject\s*\(\s*'([^']+)'`) })
	mesonExeRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:\b(\w+)\s*=\s*)?\bexecutable\s*\(\s*'([^']+)'`) })
	mesonTestRE    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:test|benchmark)\s*\(\s*'[^']*'\s*,\s*(?:(\w+)\s*[,)]|executable\s*\(\s*'([^']+)')`)
	})
	// Any test() call, its name a literal or an expression (inih's
	// test('test_' + name, runtest, ...) in a foreach).
	mesonAnyTestRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[^\w.])(?:test|benchmark)\s*\(`) })
)

func detectMeson(p *project, l *Layout) {
	files := p.collect("meson.build", mesonCommentRE())
	p.need("meson", "ninja", "cc")
	l.Build = &Command{Run: script(p.env(),
		"meson setup --buildtype=debugoptimized $HONE_OUT/build "+p.fromPath(p.dir),
		"meson compile -C $HONE_OUT/build"), Why: []string{
		"Configure and build out of the source tree, in $HONE_OUT/build.",
		"debugoptimized is -O2 -g: optimized, with line information for `hone profile`.",
	}}
	testedVar, testedExe := map[string]bool{}, map[string]bool{}
	hasTests := false
	for _, f := range files {
		if m := mesonProjectRE().FindStringSubmatch(f.text); m != nil && l.Name == "" {
			l.Name = m[1]
		}
		for _, m := range mesonTestRE().FindAllStringSubmatch(f.text, -1) {
			testedVar[m[1]], testedExe[m[2]] = true, true
		}
		hasTests = hasTests || mesonAnyTestRE().MatchString(f.text)
	}
	if hasTests {
		p.buildTreeGate(l, "meson test -C /tmp/build --no-rebuild --print-errorlogs", "The project's Meson tests, built by the build command (--no-rebuild).")
	} else {
		l.Todo = append(l.Todo, "add a gate that runs the tests: no meson.build calls test()")
	}
	if dir, exe := mesonProgram(files, testedVar, testedExe); exe != "" {
		withProgram(l, "$HONE_OUT/build/"+join(dir, exe))
	}
	p.protect(l, "**/meson.build", "meson_options.txt", "meson.options")
	l.Files = p.sourceGlobs(p.path, ".", cExts...)
	l.Sanitize = []string{"address", "undefined"}
}

// mesonProgram returns the first executable, shallowest meson.build first,
// that no test or benchmark runs and that is neither named nor placed as
// one, with the directory Meson builds it in.
func mesonProgram(files []buildFileIn, testedVar, testedExe map[string]bool) (dir, exe string) {
	for _, f := range files {
		if inDataDir(f.dir) {
			continue
		}
		for _, m := range mesonExeRE().FindAllStringSubmatch(f.text, -1) {
			if (m[1] != "" && testedVar[m[1]]) || testedExe[m[2]] || isHarnessName(m[2]) || !shellSafe(m[2]) {
				continue
			}
			return f.dir, m[2]
		}
	}
	return "", ""
}
