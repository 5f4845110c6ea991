package gaming

import (
	"testing"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// arena is the shared testbed, with this suite's own helpers beside it.
type arena struct{ *testbed.Arena }
