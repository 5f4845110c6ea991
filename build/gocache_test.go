package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// goFiles is a Go module with one dependency, taken from hone's own
// go.mod and go.sum so that it is in the module cache already.
func goFiles(t *testing.T) map[string]string {
	t.Helper()
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, "github.com/BurntSushi/toml v1.6.0") {
			lines = append(lines, l)
		}
	}
	return map[string]string{
		"targets/t/go.mod": "module example.com/t\n\ngo 1.24\n\nrequire github.com/BurntSushi/toml v1.6.0\n",
		"targets/t/go.sum": strings.Join(lines, "\n") + "\n",
		"targets/t/main.go": `package main

import (
	"fmt"

	"github.com/BurntSushi/toml"
)

func main() {
	var v struct{ A int }
	toml.Decode("A = 1", &v)
	fmt.Println(v.A)
}
`,
	}
}

const goTarget = `[targets.t]
build = "go build -v -o $HONE_OUT/prog . 2> $HONE_OUT/compiled"
`

// SeedGoCache fills the trusted Go build cache of the repository whose
// common git directory it is given with the standard library, built warm
// once per machine (internal/e2e/gowarm.Seed, set by gowarm_test.go). The
// tests that build Go and are not about a cold build use it (warmGo), to
// spare a cold build of the standard library each (20-60 s of CPU).
var SeedGoCache func(gitDir string) error

// warmGo seeds f's repository with the warm standard library; call it
// before f.start.
func (f *fixture) warmGo() {
	f.t.Helper()
	if err := SeedGoCache(filepath.Join(f.ws.Root, ".git")); err != nil {
		f.t.Fatalf("warming the trusted Go build cache: %v", err)
	}
}

// trustedFiles counts the files of the trusted Go build cache.
func trustedFiles(t *testing.T, r *Run) int {
	n := 0
	filepath.Walk(r.goCache, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// Go targets build in the jail with their modules read-only and no
// network. The baseline fills the trusted build cache; a candidate reads it
// (its build compiles only its own package) and can neither add to it nor
// write it directly.
func TestCandidateCannotWriteTheGoBuildCache(t *testing.T) {
	t.Parallel()
	tier.Jail(t)
	if _, err := lookGo(); err != nil {
		t.Skip("no go command")
	}
	f := newFixture(t, goFiles(t), goTarget)
	// The standard library comes warm: what this test proves is that the
	// baseline adds its own packages and the candidate adds nothing.
	f.warmGo()
	r := f.start(false)
	seeded := trustedFiles(t, r)
	base := f.build(r, Baseline, f.pin)
	if !base.OK() {
		t.Fatalf("baseline: %s\n%s", base.Describe(), base.Result.Stderr.Tail(2000))
	}
	if out, _ := run(t, base, "$HONE_OUT/prog"); out != "1\n" {
		t.Fatalf("baseline printed %q", out)
	}
	trusted := trustedFiles(t, r)
	if trusted <= seeded {
		t.Fatalf("the baseline build added nothing to the trusted Go cache (%d files, %d seeded)", trusted, seeded)
	}

	cand := f.commit(map[string]string{"targets/t/main.go": strings.Replace(goFiles(t)["targets/t/main.go"], "v.A)", "v.A+1)", 1)})
	c := f.build(r, Candidate, cand)
	if !c.OK() {
		t.Fatalf("candidate: %s\n%s", c.Describe(), c.Result.Stderr.Tail(2000))
	}
	compiled, err := os.ReadFile(filepath.Join(c.Out, "compiled"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(compiled)); len(got) != 1 || got[0] != "example.com/t" {
		t.Errorf("the candidate compiled %q; want only its own package, the rest from the trusted cache", got)
	}
	if n := trustedFiles(t, r); n != trusted {
		t.Errorf("the candidate's build changed the trusted Go cache: %d files, was %d", n, trusted)
	}
	if out, _ := run(t, c, "touch /hone/gocache/trusted/a/poison && echo wrote; ls -R /hone/gocache/trusted | grep poison"); out != "" {
		t.Errorf("a run wrote the trusted Go cache: %q", out)
	}
}

// What a build put into its staging folder is merged into the trusted Go
// cache only when each output hashes to its own id and nothing is reached
// through a symlink: a forged output, or a link to a file elsewhere, is
// left out.
func TestForgedGoCachePutsAreNotTrusted(t *testing.T) {
	t.Parallel()
	staging, trusted := t.TempDir(), filepath.Join(t.TempDir(), "trusted")
	put := func(action, body string, forge bool) {
		t.Helper()
		req := goRequest{ActionID: []byte(strings.Repeat(action, 32))[:32], BodySize: int64(len(body))}
		sum := sha256.Sum256([]byte(body))
		req.OutputID = sum[:]
		if res := goPut(req, []byte(body), staging); res.Err != "" {
			t.Fatal(res.Err)
		}
		if forge {
			out := outputPath(staging, hex.EncodeToString(sum[:]))
			os.WriteFile(out, []byte(strings.ToUpper(body)), 0o644)
		}
	}
	put("a", "honest output", false)
	put("b", "forged output", true)
	put("c", "linked output", false)
	linked := sha256.Sum256([]byte("linked output"))
	p := outputPath(staging, hex.EncodeToString(linked[:]))
	os.Remove(p)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("linked output"), 0o600)
	os.Symlink(secret, p)

	added, err := mergeGoCache(context.Background(), staging, trusted)
	if err != nil {
		t.Fatal(err)
	}
	if added != 1 {
		t.Errorf("merged %d actions, want only the honest one", added)
	}
	if res := goGet(goRequest{ActionID: []byte(strings.Repeat("a", 32))}, trusted, t.TempDir()); res.Miss {
		t.Error("the honest output is not served from the trusted cache")
	}
	for _, a := range []string{"b", "c"} {
		if res := goGet(goRequest{ActionID: []byte(strings.Repeat(a, 32))}, trusted, t.TempDir()); !res.Miss {
			t.Errorf("action %s is served from the trusted cache", a)
		}
	}
}
