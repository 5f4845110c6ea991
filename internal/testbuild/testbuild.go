// Package testbuild says whether this executable was built for hone's own
// tests with the work meter (build tag hone_testmeter). A release build
// cannot carry it: scripts/build.sh refuses the tag, ledger entries the
// meter makes carry ledger.FlagTestMeter, and a build without the tag
// refuses every such entry (hone ledger verify, the server's hook, append).
package testbuild

// Tag is the build tag that turns the work meter on.
const Tag = "hone_testmeter"
