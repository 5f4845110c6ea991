package workspace

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hone-perf/hone/workspace/layout"
)

// A Go harness bench is judged, rather than sent to a person as unseeded,
// when its benchmarks make their inputs from HONE_SEED and report a result
// of their work as a metric listed in outputs; an equivalence gate needs a
// command that prints such a result. Both are code the module's owner
// writes; when it is there, init reads it (go/parser, never running it)
// and names it in hone.toml, marked REVIEW.

// reviewedOutputs are the bench's outputs init found, with the comment
// that says where.
type reviewedOutputs struct {
	names []string
	why   []string
}

// benchPackageRE finds the package the build compiles into bench.test.
var benchPackageRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`go test -c -o \$HONE_OUT/bench\.test (\S+)`)
})

// seededGo reads the test files of the Go benchmarks' package l's build
// compiles (in the repository at root): a test that reads HONE_SEED and
// prints becomes the equivalence gate, and the metrics the benchmarks
// report with b.ReportMetric (not a rate: no "/" in the unit) become the
// bench's outputs. It returns the outputs, or nil.
func seededGo(root string, l *layout.Layout) *reviewedOutputs {
	if l.System != layout.Go || l.Bench == nil || l.Bench.Format != "go" || l.Build == nil {
		return nil
	}
	m := benchPackageRE().FindStringSubmatch(l.Build.Run)
	if m == nil {
		return nil
	}
	dir := filepath.Join(root, filepath.FromSlash(path.Join(l.Path, m[1])))
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	funcs := map[string]*ast.FuncDecl{}
	for _, f := range files {
		parsed, err := goparser.ParseFile(token.NewFileSet(), f, nil, goparser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range parsed.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body != nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	seeded := seedReaders(funcs)
	var golden string
	var units []string
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fd := funcs[n]
		switch {
		case golden == "" && strings.HasPrefix(n, "Test") && seeded[n] && prints(fd):
			golden = n
		case strings.HasPrefix(n, "Benchmark"):
			for _, u := range reportedUnits(fd) {
				if !strings.Contains(u, "/") && !slices.Contains(units, u) {
					units = append(units, u)
				}
			}
		}
	}
	if golden != "" {
		l.Gates = append(l.Gates, &layout.Gate{Name: "golden", Run: "$HONE_OUT/bench.test -test.run='^" + golden + "$'", Equivalence: true, Why: append([]string{reviewMark}, wrap([]string{
			"hone init read " + golden + ": it reads HONE_SEED and prints, so its output, the same for baseline and candidate on the verdict's seed, is the equivalence gate.",
			"Check that it prints the results that must not change.",
		})...)})
		l.Todo = slices.DeleteFunc(l.Todo, func(s string) bool { return strings.HasPrefix(s, "write the equivalence gate marked FILL IN") })
	}
	if len(units) == 0 && golden == "" {
		return nil
	}
	var out *reviewedOutputs
	what := "the equivalence gate"
	if len(units) > 0 {
		out = &reviewedOutputs{names: units, why: append([]string{reviewMark}, wrap([]string{
			"hone init read the benchmarks' b.ReportMetric calls: these metrics are results, which must equal the baseline's. Check that none is a timing or a count that changes with the code.",
		})...)}
		what = "the bench's outputs"
		if golden != "" {
			what = "the equivalence gate and the bench's outputs"
		}
	}
	l.Todo = append(l.Todo, "review "+what+" that hone init read from the tests, marked REVIEW in hone.toml; then delete the REVIEW lines")
	return out
}

// seedReaders are the functions that read HONE_SEED, directly or through
// a function of the package that does.
func seedReaders(funcs map[string]*ast.FuncDecl) map[string]bool {
	seeded := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for n, fd := range funcs {
			if seeded[n] {
				continue
			}
			ast.Inspect(fd.Body, func(node ast.Node) bool {
				switch x := node.(type) {
				case *ast.BasicLit:
					if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING && s == "HONE_SEED" {
						seeded[n] = true
					}
				case *ast.CallExpr:
					if id, ok := x.Fun.(*ast.Ident); ok && seeded[id.Name] {
						seeded[n] = true
					}
				}
				return !seeded[n]
			})
			changed = changed || seeded[n]
		}
	}
	return seeded
}

// prints reports whether fd calls fmt.Print, Printf or Println.
func prints(fd *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fd.Body, func(node ast.Node) bool {
		if sel, ok := node.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Print") {
				found = true
			}
		}
		return !found
	})
	return found
}

// reportedUnits are the units of fd's b.ReportMetric calls, as literals.
func reportedUnits(fd *ast.FuncDecl) []string {
	var units []string
	ast.Inspect(fd.Body, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "ReportMetric" {
			return true
		}
		if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if u, err := strconv.Unquote(lit.Value); err == nil && u != "" {
				units = append(units, u)
			}
		}
		return true
	})
	return units
}
