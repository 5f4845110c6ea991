package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/internal/tier"
)

// When hone is an ordinary user the jail runs as that user, and what a
// build leaves is that user's: sealing, checking and caching must work
// without root. This runs the build tests again as nobody, from a copy of
// this test binary that user may execute.
func TestBuildWorksForAnOrdinaryUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to become an ordinary user")
	}
	tier.Jail(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to become an ordinary user")
	}
	dir, err := os.MkdirTemp("", "hone-build-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	exe := filepath.Join(dir, "build.test")
	testproc.CopyExecutable(t, exe)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		exe, "-test.v", "-test.count=1", "-test.run",
		"^(TestCheckoutIsTheTreeWithoutGit|TestBuildCannotRewriteTheCheckout|TestRunsCannotRemember|TestBuildCannotLeaveASetuid|TestBaselineBuildIsCached|TestRewrittenCachedBaselineIsDiscarded|TestGCTrims)")
	// The tests read ../go.sum and testdata from the package folder.
	cmd.Dir, _ = os.Getwd()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "HOME=" + dir}
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "PASS") || strings.Contains(string(b), "--- SKIP") {
		t.Fatalf("as nobody: %v\n%s", err, b)
	}
	t.Logf("as nobody:\n%s", b)
}
