package layout

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// benchFuncRE finds a testing.B benchmark in a _test.go file.
var benchFuncRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^func Benchmark\w*\(\s*\w+\s+\*testing\.B\s*\)`) })

func detectGo(p *project, l *Layout) {
	mf, err := modfile.ParseLax(p.file, p.read(p.file), nil)
	if err != nil || mf.Module == nil {
		l.Todo = append(l.Todo, "fix "+p.file+": it has no module line go can read")
		mf = &modfile.File{}
	}
	p.needGo()
	l.Name = path.Base(p.path)
	if mf.Module != nil && p.path == p.dir {
		prefix, _, _ := module.SplitPathVersion(mf.Module.Mod.Path)
		l.Name = path.Base(prefix)
	}
	env := p.env()
	var steps []string
	hasMain := p.goMain()
	if hasMain && shellSafe(l.Name) {
		steps = append(steps, "go build -o $HONE_OUT/"+l.Name+" .")
	} else {
		steps = append(steps, "go build ./...")
	}
	benchPkg := p.goBenchPackage()
	if benchPkg != "" {
		steps = append(steps, "go test -c -o $HONE_OUT/bench.test "+benchPkg)
	}
	why := []string{"Build with hone's Go settings (-mod=readonly, no proxy, the local toolchain)."}
	switch benchPkg {
	case "":
	case ".":
		why = append(why, "The package's benchmarks are compiled into $HONE_OUT/bench.test, the bench.")
	default:
		why = append(why, "The benchmarks of "+benchPkg+" are compiled into $HONE_OUT/bench.test, the bench.")
	}
	l.Build = &Command{Run: script(env, steps...), Why: why}
	test := "go test ./..."
	if p.path != p.dir {
		test = "go test -C " + p.fromPath(p.dir) + " ./..."
	}
	l.Gates = append(l.Gates, &Gate{Name: "unit", Run: script(env, test), Why: []string{
		"The tests of the whole module: a change in the target can break a package",
		"that uses it.",
	}})
	if hasMain && shellSafe(l.Name) {
		withProgram(l, "$HONE_OUT/"+l.Name)
	}
	if benchPkg != "" {
		l.Bench = &Bench{Run: "$HONE_OUT/bench.test -test.run='^$' -test.bench=. -test.benchtime=100x", Format: "go", Why: []string{
			"The module's own testing.B benchmarks, with a fixed iteration count",
			"(-test.benchtime=Nx): an adaptive count would change with the code;",
			"hone grows it from 100x until each benchmark's loop outweighs its set-up.",
			"To be accepted rather than reviewed (unseeded), each benchmark draws its",
			"input from HONE_SEED and reports a result of its work, e.g.",
			"b.ReportMetric(float64(sum%1000003), \"checksum\"), listed here as",
			"outputs = [\"checksum\"] (hone's docs/deciding.md, Writing a seeded bench).",
		}}
	}
	if len(mf.Require) > 0 && !isFile(p.host(join(p.dir, "vendor/modules.txt"))) {
		l.Todo = append(l.Todo, "make the module's dependencies available offline: the jail has no network, so run `go mod vendor` in "+p.dir+" and commit vendor/, or keep them in the module cache (`go mod download`)")
	}
	p.protect(l, "go.mod", "go.sum", "go.work", "go.work.sum", "vendor/**")
	l.Protect = appendNew(appendNew(l.Protect, "**/*_test.go"), "**/testdata/**")
	l.Files = p.sourceGlobs(p.path, ".", ".go")
	l.Sanitize = []string{"thread"}
}

// needGo finds go; its GOROOT is what the jail must read.
func (p *project) needGo() {
	g, err := exec.LookPath("go")
	if err != nil {
		p.missing = appendNew(p.missing, "go")
		return
	}
	root, err := ask(p.host(p.dir), g, "env", "GOROOT")
	if err != nil || !filepath.IsAbs(root) {
		real, _ := filepath.EvalSymlinks(g)
		root = installDir(real)
	}
	p.reach(filepath.Dir(g), root)
}

// goMain reports whether the target's directory is a main package.
func (p *project) goMain() bool {
	for _, f := range p.filesMatching(p.path, "*.go") {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), p.host(join(p.path, f)), nil, parser.PackageClauseOnly)
		if err == nil && af.Name.Name == "main" {
			return true
		}
	}
	return false
}

// goBenchPackage is the package under the target's path with testing.B
// benchmarks, as `go test` names it ("." or "./sub"): the path itself if
// it has some, else the first such package.
func (p *project) goBenchPackage() string {
	var dirs []string
	base := p.host(p.path)
	walkFiles(base, goSkip, func(rel string) {
		if !strings.HasSuffix(rel, "_test.go") {
			return
		}
		if b, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(rel))); err == nil && benchFuncRE().Match(b) {
			dirs = appendNew(dirs, path.Dir(rel))
		}
	})
	if len(dirs) == 0 {
		return ""
	}
	sort.Slice(dirs, func(i, j int) bool {
		return depth(dirs[i]) < depth(dirs[j]) || depth(dirs[i]) == depth(dirs[j]) && dirs[i] < dirs[j]
	})
	if dirs[0] == "." {
		return "."
	}
	return "./" + dirs[0]
}

// goSkip skips the directories the go command ignores.
func goSkip(name string) bool {
	return hidden(name) || strings.HasPrefix(name, "_") || name == "vendor" || name == "testdata"
}

// goSourceDir is the subdirectory holding every package of a module at the
// repository top level, or "" when the top level has Go files itself or
// the packages are spread over several subdirectories.
func goSourceDir(root string) string {
	if m, _ := filepath.Glob(filepath.Join(root, "*.go")); len(m) > 0 {
		return ""
	}
	first := ""
	walkFiles(root, goSkip, func(rel string) {
		if !strings.HasSuffix(rel, ".go") {
			return
		}
		switch seg, _, _ := strings.Cut(rel, "/"); first {
		case "":
			first = seg
		case seg, "-":
		default:
			first = "-"
		}
	})
	if first == "-" {
		return ""
	}
	return first
}
