package build

import (
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/testproc"
)

// The tests start this binary as the jail's meter and the programs it runs.
// The tests' git environment is set once here, not with t.Setenv in each
// fixture, so that tests may run in parallel.
func TestMain(m *testing.M) { testproc.Main(m, func() { testgit.SetenvMain() }) }
