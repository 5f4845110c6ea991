package verdict

import (
	"testing"

	"github.com/hone-perf/hone/internal/testproc"
)

// The tests start this binary as the jail's meter and the programs it runs.
func TestMain(m *testing.M) { testproc.Main(m) }
