package seams

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/testgit"
)

const honeToml = `[targets.t]
path = "targets/t"
build = "true"

  [[targets.t.gates]]
  name = "unit"
  run = "true"

  [targets.t.bench]
  run = "true"
`

const diff = `diff --git a/targets/t/main.c b/targets/t/main.c
--- a/targets/t/main.c
+++ b/targets/t/main.c
@@ -1 +1 @@
-int main(void) { return 0; }
+int main(void) { return 0; /* faster */ }
`

// fingerprint hashes every path, mode and content under dir, so any file
// hone writes (objects, refs, its state directory, hooks, .gitignore) shows.
func fingerprint(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00" + info.Mode().String() + "\x00"))
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// An agent (or a careless user) points hone at a repository whose object
// names are sha256. hone's hand-written object writer and ref store speak
// sha1 only, so every command refuses the repository with one line, exit
// 1, and leaves it byte for byte as it was: no ledger branch, no patch
// ref, no hooks, no state directory, no .gitignore line.
func TestSha256RepositoryIsRefusedBeforeAnythingIsWritten(t *testing.T) {
	hone := e2e.Hone(t)
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--object-format=sha256", dir).CombinedOutput(); err != nil {
		t.Skipf("this git cannot make a sha256 repository: %v: %s", err, out)
	}
	testgit.WriteFiles(t, dir, map[string]string{
		"hone.toml":          honeToml,
		"targets/t/main.c":   "int main(void) { return 0; }\n",
		"targets/t/diff.txt": diff,
	})
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "a target")
	before := fingerprint(t, dir)

	for _, args := range [][]string{
		{"init"},
		{"targets"},
		{"ledger", "list"},
		{"ledger", "verify"},
		{"patch", "propose", "t", "--hotspot", "main", "--class", "5", "--hypothesis", "less work", "--file", "targets/t/diff.txt"},
		{"hooks", "install"},
		{"worktree", "enter", "--target", "t"},
		{"targets", "--json"},
	} {
		cmd := exec.Command(hone, args...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		msg := strings.TrimSpace(stderr.String())
		if code != 1 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "extensions.objectformat = sha256") || stdout.Len() != 0 {
			t.Errorf("hone %s: exit %d, stdout %q, stderr %q; want exit 1 and one line naming extensions.objectformat = sha256",
				strings.Join(args, " "), code, stdout.String(), msg)
		}
	}
	if after := fingerprint(t, dir); after != before {
		t.Errorf("the refused repository changed:\n%s", testgit.Git(t, dir, "status", "--porcelain", "--ignored"))
	}
}
