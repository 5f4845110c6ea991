//go:build hone_testmeter

package testbuild

// WorkMeter is true in hone's test builds: verdicts are measured by the work
// each bench run declares (see verdict's workMeter), unless HONE_TIER is
// "measure", where the measurement tier needs the real meter.
const WorkMeter = true
