// Command hone is the trust layer for performance optimization: it profiles a
// target, keeps a git-native ledger of every attempt, applies patches only inside
// the target's allowlist, and judges them with gates and an interleaved benchmark.
package main

import (
	"os"

	"github.com/hone-perf/hone/internal/reexec"
)

func main() {
	// First: hone's executable is also the jail's meter, the differential
	// driver and the Go cache program, by the name it was started under.
	if reexec.Init() {
		return
	}
	os.Exit(Main(os.Args[1:]))
}
