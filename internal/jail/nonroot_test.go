package jail

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/internal/tier"
)

// When hone is not root the jail runs as hone's own user, and bwrap binds
// hone's directories itself (--bind-fd). This runs the honest and attack
// tests again as an ordinary user (nobody), from a copy of this test binary
// that user may execute.
func TestJailWorksForAnOrdinaryUser(t *testing.T) {
	root(t)
	tier.Jail(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to become an ordinary user")
	}
	// Not t.TempDir: its parent is private to root.
	dir, err := os.MkdirTemp("", "hone-jail-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "jail.test")
	testproc.CopyExecutable(t, exe)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		exe, "-test.v", "-test.count=1", "-test.run", "^(TestCandidate|TestRun|TestEnvironment|TestJailHasNoPrivileges|TestCompiles|TestMake|TestCopy|TestDirectExec|TestTimeout|TestCancel|TestForkBomb|TestKilledHone|TestWeak|TestSwapped)")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "HOME=" + tmp}
	out, err := cmd.CombinedOutput()
	// Some tests need root and skip as nobody; the rest must have run.
	if err != nil || strings.Count(string(out), "--- PASS") < 20 {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}
