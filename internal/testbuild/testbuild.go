// Package testbuild says whether this executable was built for hone's own
// tests with the work meter (build tag hone_testmeter). A release build
// cannot carry it: scripts/build.sh refuses the tag, ledger entries the
// meter makes carry ledger.FlagTestMeter, and a build without the tag
// refuses every such entry (hone ledger verify, the server's hook, append).
package testbuild

// Tag is the build tag that turns the work meter on.
const Tag = "hone_testmeter"

// TierEnv selects the measurement tier when it is "measure": there a test
// build measures on the clock, as a release does (internal/tier reads it
// too).
const TierEnv = "HONE_TIER"

// MeasureTier is TierEnv's value for the measurement tier.
const MeasureTier = "measure"
