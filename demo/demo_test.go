package demo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The corpus is part of the demo's contract: its verdicts and the golden
// output are measured on exactly this text on every machine.
func TestCorpusIsStable(t *testing.T) {
	sum := sha256.Sum256(Corpus())
	if got, want := hex.EncodeToString(sum[:]), "9d2e5f6eb215ddf1487e0d16b41276950eb22acf2aa424b71aefd428e6063969"; got != want {
		t.Fatalf("corpus sha256 = %s, want %s: the generator changed; re-check the demo's timings", got, want)
	}
}

// The example's generator, which the gates and the bench run with the
// verdict's seed, writes the same corpus for the seed Corpus uses, and
// another for another seed.
func TestSeededCorpusGenerator(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc)")
	}
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen")
	src, err := filepath.Abs(filepath.Join("example", TargetPath, "testdata", "gen.c"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, "cc", "-O2", "-o", gen, src)
	if got := run(t, dir, gen, "24301"); got != string(Corpus()) {
		t.Error("gen 24301 is not the corpus")
	}
	if other := run(t, dir, gen, "777"); other == string(Corpus()) || !strings.HasSuffix(other, ".\n") {
		t.Error("gen 777 is the same corpus")
	}
}

func TestCreateRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Create(context.Background(), dir); err == nil {
		t.Fatal("Create wrote into a non-empty directory")
	}
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestExample builds the example as hone.toml does, and checks each demo
// patch against it: all apply to the committed pin; the fix and the slow
// patch keep the unit test and the golden output; and the diffs that the
// session expects to be refused really touch what makes them refusable.
func TestExample(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc): the example cannot be built")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := Create(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	if st := run(t, ws, "git", "status", "--porcelain"); st != "" {
		t.Fatalf("Create left uncommitted files:\n%s", st)
	}
	src := filepath.Join(ws, TargetPath)
	build := func(out string) string {
		run(t, src, "cc", "-O2", "-g", "-o", filepath.Join(out, "wordfreq"), "wordfreq.c")
		run(t, src, "cc", "-O2", "-g", "-o", filepath.Join(out, "wordfreq_test"), "wordfreq_test.c")
		run(t, src, filepath.Join(out, "wordfreq_test"))
		return run(t, src, filepath.Join(out, "wordfreq"), "testdata/corpus.txt")
	}
	golden := build(t.TempDir())
	if !strings.Contains(golden, "60000 words, 3000 distinct") {
		t.Fatalf("unexpected golden output:\n%s", golden)
	}

	for _, tc := range []struct {
		diff    string
		sameOut bool   // builds, passes the unit test, prints the golden output
		touches string // a path the diff must change
	}{
		{"hash-table.diff", true, TargetPath + "/wordfreq.c"},
		{"hash-table-again.diff", true, TargetPath + "/wordfreq.c"},
		{"length-check.diff", true, TargetPath + "/wordfreq.c"},
		{"hash-table-and-config.diff", false, "hone.toml"},
	} {
		t.Run(tc.diff, func(t *testing.T) {
			p := filepath.Join(ws, PatchDir, tc.diff)
			run(t, ws, "git", "apply", "--check", p)
			if stat := run(t, ws, "git", "apply", "--numstat", p); !strings.Contains(stat, tc.touches) {
				t.Fatalf("%s does not change %s:\n%s", tc.diff, tc.touches, stat)
			}
			if !tc.sameOut {
				return
			}
			run(t, ws, "git", "apply", p)
			defer run(t, ws, "git", "checkout", "--", ".")
			if got := build(t.TempDir()); got != golden {
				t.Fatalf("output changed:\n%s\nwant:\n%s", got, golden)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	got := ShellQuote([]string{"hone", "patch", "--hypothesis", "it's O(1)", "--file", "patches/a.diff"})
	if want := `hone patch --hypothesis 'it'\''s O(1)' --file patches/a.diff`; got != want {
		t.Fatalf("ShellQuote = %s, want %s", got, want)
	}
}
