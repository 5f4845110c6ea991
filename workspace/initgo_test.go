package workspace

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// walkthroughModule is the Go module of cmd/hone's walkthrough script
// (fnvx, shaped like xxhash) at the top of a repository: as shipped, or
// with the walkthrough's edits (a seeded benchmark reporting a checksum, a
// golden test), plus extra files.
func walkthroughModule(t *testing.T, edited bool, extra map[string]string) map[string]string {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("..", "cmd", "hone", "testdata", "script", "walkthrough_go.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range a.Files {
		if name, ok := strings.CutPrefix(f.Name, "fnvx/"); ok {
			files[name] = string(f.Data)
		} else if edited && strings.HasSuffix(f.Name, "_test.go") {
			files[f.Name] = string(f.Data)
		}
	}
	for name, body := range extra {
		files[name] = body
	}
	return files
}

// A module whose benchmark draws its input from HONE_SEED and reports a
// checksum, and whose golden test reads HONE_SEED and prints: init names
// the checksum among the bench's outputs and the golden test as the
// equivalence gate, both marked REVIEW. A rate a benchmark reports
// (bytes/op) is no result, and a seeded test that prints nothing is no
// gate. As shipped (neither), the gate stays FILL IN and the bench has no
// outputs.
func TestInitNamesAGoModulesSeededResultsInHoneToml(t *testing.T) {
	extra := map[string]string{"extra_test.go": `package fnvx

import (
	"os"
	"testing"
)

func TestASeededCheck(t *testing.T) {
	if os.Getenv("HONE_SEED") == "" {
		t.Skip()
	}
}

func BenchmarkRate(b *testing.B) { b.ReportMetric(1, "bytes/op") }
`}
	tg, text, todo := initTarget(t, walkthroughModule(t, true, extra), nil, InitOptions{})
	if got := gate(tg, "golden"); got != "$HONE_OUT/bench.test -test.run='^TestGolden$'" {
		t.Errorf("golden gate %q, want the golden test", got)
	}
	if !slices.Equal(tg.Bench.Outputs, []string{"checksum"}) {
		t.Errorf("bench outputs %q, want [checksum]", tg.Bench.Outputs)
	}
	if n := strings.Count(text, "# "+reviewMark+"\n"); n != 2 {
		t.Errorf("%d review marks in hone.toml, want one on the gate and one on the outputs:\n%s", n, text)
	}
	if slices.ContainsFunc(todo, func(s string) bool { return strings.Contains(s, "FILL IN") }) ||
		!slices.ContainsFunc(todo, func(s string) bool {
			return strings.HasPrefix(s, "review the equivalence gate and the bench's outputs")
		}) {
		t.Errorf("to do: %q", todo)
	}

	tg, text, todo = initTarget(t, walkthroughModule(t, false, nil), nil, InitOptions{})
	if gate(tg, "golden") != "" || len(tg.Bench.Outputs) != 0 || strings.Contains(text, reviewMark) ||
		!slices.ContainsFunc(todo, func(s string) bool { return strings.HasPrefix(s, "write the equivalence gate marked FILL IN") }) {
		t.Errorf("the module as shipped: golden gate %q, outputs %q, to do %q", gate(tg, "golden"), tg.Bench.Outputs, todo)
	}
}
