package gaming

import (
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }
