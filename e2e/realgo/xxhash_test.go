// Package realgo judges a real Go library as a new user would: fetched
// through the Go module proxy at test time, given a seeded test, set up by
// `hone init` alone, and given real patches.
package realgo

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/e2e/gowarm"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

// xxhashModule is cespare/xxhash at the first tag holding its upstream
// change a7909af "Allow Sum64String and (*Digest).WriteString to be
// inlined". The proxy serves tags only, not that change's parent, so the
// pin is this tag with the change undone (inlined, testImports): the parent's
// code, plus the unrelated commits between them (CI, a README, an assembly
// fix for dynamic linking, a test fix).
const xxhashModule = "github.com/cespare/xxhash/v2@v2.1.2"

// inlined is the upstream change to the library, as each piece reads
// after it and before it: applied backwards it makes the pin, forwards
// again it is the patch.
var inlined = []struct{ file, after, before string }{
	{"xxhash_unsafe.go", "import (\n\t\"unsafe\"\n)", "import (\n\t\"reflect\"\n\t\"unsafe\"\n)"},
	{"xxhash_unsafe.go", "\tb := *(*[]byte)(unsafe.Pointer(&sliceHeader{s, len(s)}))\n\treturn Sum64(b)", reflectCopy + "\treturn Sum64(b)"},
	{"xxhash_unsafe.go", "\td.Write(*(*[]byte)(unsafe.Pointer(&sliceHeader{s, len(s)})))\n" +
		"\t// d.Write always returns len(s), nil.\n\t// Ignoring the return output and returning these fixed values buys a\n" +
		"\t// savings of 6 in the inliner's cost model.\n\treturn len(s), nil", reflectCopy + "\treturn d.Write(b)"},
}

// testImports are the imports of the test the change added (testInlining),
// which the parent's code fails; the pin has neither.
var testImports = struct{ after, before string }{"import (\n\t\"os/exec\"\n\t\"sort\"\n\t\"strings\"", "import (\n\t\"strings\""}

const reflectCopy = "\tvar b []byte\n\tbh := (*reflect.SliceHeader)(unsafe.Pointer(&b))\n" +
	"\tbh.Data = (*reflect.StringHeader)(unsafe.Pointer(&s)).Data\n\tbh.Len = len(s)\n\tbh.Cap = len(s)\n"

// testInlining starts the test the change added, cut from the pin.
const testInlining = "\n// This test is inspired by the Go runtime tests"

// goldenTest is the maintainer's seeded test, added to the pin, which hone
// init reads as the equivalence gate: both string entry points hash
// strings drawn from HONE_SEED, of every length up to 200 bytes, and the
// digests are printed.
const goldenTest = `package xxhash

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestGolden(t *testing.T) {
	seed, err := strconv.ParseUint(os.Getenv("HONE_SEED"), 10, 64)
	if err != nil {
		t.Skip("HONE_SEED is not set")
	}
	var sum uint64
	d := New()
	for i := 0; i < 4000; i++ {
		seed = seed*6364136223846793005 + 1442695040888963407
		s := strings.Repeat(strconv.FormatUint(seed|1<<63, 36), 16)[:i%200]
		sum = sum*31 + Sum64String(s)
		d.WriteString(s)
	}
	fmt.Printf("%016x %016x\n", sum, d.Sum64())
}
`

// world is the repository a new user made of the module: the pin
// committed, and hone init's hone.toml, with the equivalence gate it read
// from the seeded test, committed as written.
type world struct {
	t                    *testing.T
	bin, repo, home, tmp string
	toml                 string // hone.toml as committed
}

// newWorld fetches the module, makes the pin, and sets hone up on it.
// extra files (path -> content) are added to the pin beside the golden
// test.
func newWorld(t *testing.T, extra map[string]string) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{t: t, bin: e2e.Hone(t), repo: filepath.Join(base, "repo"), home: filepath.Join(base, "home"), tmp: filepath.Join(base, "tmp")}
	for _, d := range []string{w.home, w.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e2e.CopyModule(t, e2e.FetchModule(t, xxhashModule), w.repo)
	for _, c := range inlined {
		w.edit(c.file, c.after, c.before)
	}
	w.edit("xxhash_unsafe_test.go", testImports.after, testImports.before)
	test := w.read("xxhash_unsafe_test.go")
	cut := strings.Index(test, testInlining)
	if cut < 0 {
		t.Fatalf("xxhash_unsafe_test.go has no %q", testInlining)
	}
	w.write("xxhash_unsafe_test.go", test[:cut])
	w.write("golden_test.go", goldenTest)
	for p, content := range extra {
		w.write(p, content)
	}
	w.git("init", "-q", "-b", "main")
	w.git("add", "-A")
	w.git("commit", "-q", "-m", xxhashModule+" with its upstream change a7909af undone")
	w.hone("init")
	w.toml = w.read(workspace.FileName)
	if !strings.Contains(w.toml, "name = \"golden\"\n  run  = \"$HONE_OUT/bench.test -test.run='^TestGolden$'\"\n  equivalence = true") {
		t.Fatalf("hone init did not make TestGolden the equivalence gate:\n%s", w.toml)
	}
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "hone init, its equivalence gate read from TestGolden")
	// The standard library comes warm; xxhash itself is built cold.
	gowarm.SeedT(t, filepath.Join(w.repo, ".git"))
	return w
}

// propose proposes the pieces (after replacing before) as one patch and
// returns its id.
func (w *world) propose(hypothesis string, pieces []struct{ file, after, before string }) string {
	w.t.Helper()
	for _, c := range pieces {
		w.edit(c.file, c.before, c.after)
	}
	diff := w.run("git", "diff")
	w.git("checkout", "-q", "--", ".")
	file := filepath.Join(w.t.TempDir(), "patch.diff")
	if err := os.WriteFile(file, []byte(diff), 0o644); err != nil {
		w.t.Fatal(err)
	}
	out := w.hone("patch", "propose", "xxhash", "--hotspot", "Sum64String", "--class", "1", "--hypothesis", hypothesis, "--file", file, "--json")
	var p struct {
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.PatchID == "" {
		w.t.Fatalf("propose: %v\n%s", err, out)
	}
	return p.PatchID
}

// verdict judges a patch and returns its entry as --json prints it.
func (w *world) verdict(id string) *verdict.Entry {
	w.t.Helper()
	out := w.hone("verdict", id, "--json")
	var e verdict.Entry
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		w.t.Fatalf("verdict JSON: %v\n%s", err, out)
	}
	w.t.Logf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	return &e
}

func (w *world) read(p string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.repo, p))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

func (w *world) write(p, content string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(w.repo, p)), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.repo, p), []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// edit replaces the one occurrence of from in file p with to.
func (w *world) edit(p, from, to string) {
	w.t.Helper()
	s := w.read(p)
	if strings.Count(s, from) != 1 {
		w.t.Fatalf("%s does not hold %q once", p, from)
	}
	w.write(p, strings.Replace(s, from, to, 1))
}

// command runs name in the repository with an environment of the test's
// own (e2e.Env).
func (w *world) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = w.repo
	cmd.Env = e2e.Env(w.home, w.tmp)
	return cmd
}

// run runs a command in the repository and fails the test unless it
// exits 0; it returns stdout.
func (w *world) run(name string, args ...string) string {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := w.command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	return strings.TrimSpace(w.run("git", args...))
}
func (w *world) hone(args ...string) string { w.t.Helper(); return w.run(w.bin, args...) }

func TestMain(m *testing.M) { e2e.Main(m) }
