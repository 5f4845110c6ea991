//go:build !hone_testmeter

package testbuild

// WorkMeter is false in every build without the tag: verdicts are measured
// by the clock or the instruction counters, never by declared work.
const WorkMeter = false
