package build_test

import (
	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/e2e/gowarm"
)

// build's own tests cannot import gowarm, which imports build; this
// external test file hands them its Seed (see SeedGoCache).
func init() { build.SeedGoCache = gowarm.Seed }
