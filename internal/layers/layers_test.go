// Package layers holds the test that keeps hone's import graph pointing
// down: cmd/hone, then the use cases, then the domain, then internal. An
// arrow that runs back up is how a rule ends up written twice.
package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/hone-perf/hone/"

// rank is each package's layer: a package may import packages of its own
// layer or below, never above. Every package is named, internal ones too,
// so a new package must be placed here.
var rank = map[string]int{
	// End-to-end suites and what they share: they drive the built binary.
	"e2e/testbed": 7,

	"cmd/hone": 6, "cmd/hone-jail-helper": 6,

	// Use cases that compose others: the demo, the agent runner, the guards.
	"demo": 5, "harness/agent": 5, "guard": 5,
	// Surfaces and views over the verdicts and the ledger.
	"mcp": 4, "report": 4, "worktree": 4, "runner": 4,
	// Use cases: judge, profile, propose, read the source.
	"verdict": 3, "verdict/risk": 3, "profile": 3, "patch": 3, "source": 3,
	// The domain: the ledger, the config, builds in the jail, the rules.
	"ledger": 2, "workspace": 2, "workspace/layout": 2, "build": 2, "allowlist": 2,
	"sanitize": 2, "benchformat": 2, "playbooks": 2, "harness": 2,
	// The verdict's pure statistics, below every use of them.
	"verdict/stats": 2,
	// A test helper that fills a trusted Go cache by a build in the jail,
	// for the tests of the use cases above.
	"internal/e2e/gowarm": 2,

	// The machinery every layer above stands on: the one seam to git (the
	// binary, the Store), locks and scratch folders, the jail and what runs
	// inside it.
	"internal/git": 1, "internal/repo": 1, "internal/lock": 1, "internal/scratch": 1,
	"internal/jail": 1, "internal/driver": 1,
	// Helpers only tests import (internal/testgit checks that of itself).
	"internal/testgit": 1, "internal/repo/repotest": 1, "internal/testproc": 1,
	"internal/e2e": 1, "internal/layers": 1,

	// Leaves: typed errors, the re-exec registry, files written whole, text
	// made safe to print, signatures, host facts, perf stat's format.
	"internal/errs": 0, "internal/reexec": 0, "internal/atomicfile": 0, "internal/gitpath": 0,
	"internal/safetext": 0, "internal/signing": 0, "internal/hostinfo": 0,
	"internal/perfstat": 0, "internal/refdoc": 0, "internal/testbuild": 0, "internal/tier": 0,
	"internal/textwrap": 0,
	// The module's go.mod and go.sum, embedded.
	".": 0,
	// A developer's tool that reads process accounting: the standard
	// library only.
	"scripts/suitecpu": 0,
}

func layer(pkg string) (int, bool) {
	r, ok := rank[pkg]
	return r, ok
}

func TestNoPackageImportsUpward(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		seen[pkg] = true
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		own, ok := layer(pkg)
		if !ok {
			t.Errorf("package %s has no layer: place it in internal/layers' rank", pkg)
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			dep := strings.Trim(imp.Path.Value, `"`)
			if !strings.HasPrefix(dep, module) {
				continue
			}
			dep = strings.TrimPrefix(dep, module)
			checked++
			if r, ok := layer(dep); !ok || r > own {
				t.Errorf("%s (layer %d) imports %s (layer %d): an arrow that runs up", pkg, own, dep, r)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range rank {
		if !seen[pkg] {
			t.Errorf("rank names %s, which is not a package: remove it", pkg)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d imports checked: is the walk reading the module?", checked)
	}
}
