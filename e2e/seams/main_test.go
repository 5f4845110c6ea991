// Package seams holds the end-to-end tests of hone's seam to git: the real
// hone binary against real repositories git made.
package seams

import (
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/testgit"
)

func TestMain(m *testing.M) {
	testgit.SetenvMain()
	e2e.Main(m)
}
