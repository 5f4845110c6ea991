// Package tier places each of hone's tests in one of three tiers, in one
// place, so that a tier cannot grow by scattered checks:
//
//   - unit, `go test -short ./...`: hermetic. No jail, no hone binary, no
//     bench. Jail and Hone skip there, and a jail started anyway fails
//     (internal/jail's launch refuses under -short; see testproc.Main).
//   - the default tier, `bash scripts/test.sh`: every defence against the
//     real jail, builds, gates, hooks and signatures, decided by evidence
//     (outputs, recorded risk signals, declared work through the test
//     builds' work meter), never by the clock.
//   - measurement, `bash scripts/test.sh --measure` (HONE_TIER=measure):
//     the tests whose subject is measurement, with the real meter, on an
//     idle machine. Each says why chance fails it less than once in a
//     thousand runs, and none may skip: a missing tool fails the run.
package tier

import (
	"os"
	"os/exec"
	"testing"

	"github.com/hone-perf/hone/internal/testbuild"
)

// Env is the variable that selects the measurement tier ("measure"). The
// test builds' work meter reads it too: under it, verdicts are timed.
const Env = testbuild.TierEnv

// Measuring reports whether this run is the measurement tier.
func Measuring() bool { return os.Getenv(Env) == testbuild.MeasureTier }

// Measure marks t as a test of the measurement tier. Outside it, t is
// skipped; in it, t may not skip, so a tool that is missing or a machine
// that cannot measure fails the tier rather than passing it empty. chance
// is the test's argument that noise fails it less than once in a thousand
// runs (from the decision rule's error rates or the effect's margin): a
// test that has none belongs redesigned, not here.
func Measure(t testing.TB, chance string) {
	t.Helper()
	if chance == "" {
		t.Fatal("a measurement-tier test must say why chance fails it less than once in a thousand runs")
	}
	if !Measuring() {
		t.Skipf("measurement tier (%s=measure, bash scripts/test.sh --measure)", Env)
	}
	t.Cleanup(func() {
		if t.Skipped() {
			t.Errorf("a measurement-tier test may not skip: install what it needs (scripts/ci-deps.sh) or fix the machine")
		}
	})
}

// Jail marks t as one that starts jails (builds, gates, verdicts, the
// hone binary): the default tier and up, never unit.
func Jail(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts jails: not in the unit tier (-short)")
	}
}

// Need skips t unless every tool is on PATH; in the measurement tier
// (Measure) the skip fails the test, as every skip there does.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
}
