package realinit

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/tier"
)

// workspace runs git and hone in a repository.
type workspace struct {
	t        *testing.T
	dir, bin string
}

// initProject commits the project in dir as its pin, runs `hone init` and
// commits what init wrote, as a newcomer would before the first verdict.
// It skips when a tool the project's build or hone's jail needs is absent.
func initProject(t *testing.T, dir string, tools ...string) workspace {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a real project in the jail and runs a verdict")
	}
	tier.Need(t, append([]string{"cc", "bwrap", "perf"}, tools...)...)
	w := workspace{t: t, dir: dir, bin: e2e.Hone(t)}
	w.git("init", "-q", "-b", "main")
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "the pin")
	w.hone("init")
	return w
}

// commitInit commits hone.toml and .gitignore as init wrote them.
func (w workspace) commitInit() {
	w.t.Helper()
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "hone")
}

// tomlHas checks that hone.toml holds every string in want.
func (w workspace) tomlHas(want ...string) {
	w.t.Helper()
	toml, err := os.ReadFile(filepath.Join(w.dir, "hone.toml"))
	if err != nil {
		w.t.Fatal(err)
	}
	for _, s := range want {
		if !bytes.Contains(toml, []byte(s)) {
			w.t.Errorf("hone.toml lacks %s:\n%s", s, toml)
		}
	}
}

type hotspot struct {
	Symbol string `json:"symbol"`
	File   string `json:"file"`
}

// hotspotIn checks that `hone profile run` finds one of symbols (the
// compiler may inline a static function into its caller), in a file ending
// in file, first among the target's hotspots.
func (w workspace) hotspotIn(target, file string, symbols ...string) {
	w.t.Helper()
	var prof struct {
		Hotspots []hotspot `json:"hotspots"`
	}
	w.json(&prof, "profile", "run", target, "--json")
	if len(prof.Hotspots) == 0 || !slices.Contains(symbols, prof.Hotspots[0].Symbol) || !strings.HasSuffix(prof.Hotspots[0].File, file) {
		w.t.Errorf("hotspots %+v, want one of %q in %s first", prof.Hotspots, symbols, file)
	}
}

// judge proposes the patch that replaces old by new in file (relative to
// the repository) and returns the verdict and its summary. The working
// tree is left as it was, and the verdict must leave it so.
//
// Each project's bench program declares the work its library did
// (hone-work on stderr, counted where the work is done, in the pin and in
// the tests' patches alike): these tests hold init, builds and gates, and
// under the test build's work meter the patch that does less work is
// measured faster on a busy machine as on an idle one.
func (w workspace) judge(target, hotspot, file, old, new string) (verdict, summary string) {
	w.t.Helper()
	src := filepath.Join(w.dir, filepath.FromSlash(file))
	text, err := os.ReadFile(src)
	if err != nil {
		w.t.Fatal(err)
	}
	patched := strings.Replace(string(text), old, new, 1)
	if patched == string(text) {
		w.t.Fatalf("%s does not hold the text the patch replaces", file)
	}
	os.WriteFile(src, []byte(patched), 0o644)
	diff := w.git("diff")
	w.git("checkout", "-q", ".")
	patch := filepath.Join(w.t.TempDir(), "patch.diff")
	os.WriteFile(patch, []byte(diff+"\n"), 0o644)
	var p struct {
		PatchID string `json:"patch_id"`
	}
	w.json(&p, "patch", "propose", target, "--hotspot", hotspot, "--class", "5", "--hypothesis", "less work per byte", "--file", patch, "--json")
	var v struct {
		Verdict string `json:"verdict"`
		Summary string `json:"summary"`
	}
	w.json(&v, "verdict", p.PatchID, "--json")
	if out := w.git("status", "--porcelain"); out != "" {
		w.t.Errorf("the verdict changed the working tree:\n%s", out)
	}
	return v.Verdict, v.Summary
}

func (w workspace) run(name string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
		"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid", "GIT_CONFIG_NOSYSTEM=1", "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func (w workspace) git(args ...string) string  { w.t.Helper(); return w.run("git", args...) }
func (w workspace) hone(args ...string) string { w.t.Helper(); return w.run(w.bin, args...) }

func (w workspace) json(v any, args ...string) {
	w.t.Helper()
	out := w.hone(args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		w.t.Fatalf("hone %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// writeTree writes files (slash paths relative to dir, the project's own
// small C written for the test) into dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFixture(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
