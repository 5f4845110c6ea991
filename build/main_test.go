package build

import (
	"os"
	"testing"

	"github.com/hone-perf/hone/internal/reexec"
	"github.com/hone-perf/hone/internal/testgit"
)

// The tests start this binary as the jail's meter and the programs it runs
// (testproc.Main's reexec.Init). The tests' git environment is set once
// here, not with t.Setenv in each fixture, so that tests may run in
// parallel.
func TestMain(m *testing.M) {
	if reexec.Init() {
		return
	}
	testgit.SetenvMain()
	os.Exit(m.Run())
}
