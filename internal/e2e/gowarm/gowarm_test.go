package gowarm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hone-perf/hone/internal/reexec"
)

func TestMain(m *testing.M) {
	reexec.Init()
	os.Exit(m.Run())
}

// A seeded repository's trusted cache holds the warm-up build's actions
// and outputs, as hone's own layout of it (a/ and o/).
func TestSeedGivesARepositoryTheWarmStandardLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("the first warm-up on a machine builds the standard library in the jail")
	}
	for _, tool := range []string{"go", "bwrap", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	git := filepath.Join(t.TempDir(), ".git")
	SeedT(t, git)
	for _, d := range []string{"a", "o"} {
		ents, err := os.ReadDir(filepath.Join(git, trustedDir, d))
		if err != nil || len(ents) < 16 {
			t.Errorf("%s: %d folders, %v", d, len(ents), err)
		}
	}
}
