//go:build !hone_testmeter

package guard

// receivePause is the test builds' seam for racing two pushes (see
// receivepause_testbuild.go); a release honours no such setting.
func receivePause(string) {}
