package realinit

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// A project shaped like zlib, whose two surprises a first `hone init` met:
// a CMake configure that renames a tracked header when building out of
// the tree, and core sources with a main under #ifdef or in a comment.
// init must write a hone.toml whose profile and first verdict work
// without edits, with every core source patchable.
func TestInitOnAZlibShapedProjectWorksFirstTime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with CMake in the jail and runs a verdict")
	}
	for _, tool := range []string{"cmake", "cc", "bwrap", "perf", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	repo := t.TempDir()
	copyFixture(t, "testdata/zlike", repo)
	w := workspace{t: t, dir: repo, bin: e2e.Hone(t)}
	w.git("init", "-q", "-b", "main")
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "the pin")
	w.hone("init")

	toml, err := os.ReadFile(filepath.Join(repo, "hone.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"crc32.c"`, `"inflate.c"`, "$HONE_OUT/src"} {
		if !bytes.Contains(toml, []byte(want)) {
			t.Errorf("hone.toml lacks %s:\n%s", want, toml)
		}
	}
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "hone")

	var prof struct {
		Hotspots []struct {
			Symbol string `json:"symbol"`
			File   string `json:"file"`
		} `json:"hotspots"`
	}
	w.json(&prof, "profile", "run", "zlike", "--json")
	if len(prof.Hotspots) == 0 || prof.Hotspots[0].Symbol != "crc32" || !strings.HasSuffix(prof.Hotspots[0].File, "crc32.c") {
		t.Errorf("hotspots %+v, want crc32 in crc32.c first", prof.Hotspots)
	}

	// The table-driven CRC, as zlib has it: several times faster.
	src := filepath.Join(repo, "crc32.c")
	old, _ := os.ReadFile(src)
	fast := strings.Replace(string(old), `unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned long len) {
    crc = ~crc & 0xffffffffUL;
    while (len--) {
        crc ^= *buf++;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xedb88320UL : crc >> 1;
    }`, `static unsigned long table[256];
unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned long len) {
    if (!table[1])
        for (unsigned long n = 0; n < 256; n++) {
            unsigned long c = n;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? (c >> 1) ^ 0xedb88320UL : c >> 1;
            table[n] = c;
        }
    crc = ~crc & 0xffffffffUL;
    while (len--)
        crc = table[(crc ^ *buf++) & 0xff] ^ (crc >> 8);`, 1)
	if fast == string(old) {
		t.Fatal("the fixture's crc32 changed: update the patch")
	}
	os.WriteFile(src, []byte(fast), 0o644)
	diff := w.git("diff")
	w.git("checkout", "-q", ".")
	patch := filepath.Join(t.TempDir(), "fast.diff")
	os.WriteFile(patch, []byte(diff+"\n"), 0o644)
	var p struct {
		PatchID string `json:"patch_id"`
	}
	w.json(&p, "patch", "propose", "zlike", "--hotspot", "crc32", "--class", "5", "--hypothesis", "a byte table", "--file", patch, "--json")
	var v struct {
		Verdict string `json:"verdict"`
		Summary string `json:"summary"`
	}
	w.json(&v, "verdict", p.PatchID, "--json")
	if v.Verdict != "accepted" {
		t.Errorf("the table-driven CRC was judged %s: %s", v.Verdict, v.Summary)
	}
	if out := w.git("status", "--porcelain"); out != "" {
		t.Errorf("the verdict changed the working tree:\n%s", out)
	}
}

// workspace runs git and hone in a repository.
type workspace struct {
	t        *testing.T
	dir, bin string
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
