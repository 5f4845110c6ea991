// Command hone-jail-helper is the jail's meter and root stager on their own,
// without the rest of hone: hone starts both for every jailed run, and this
// program starts in about a quarter of hone's time. Install it beside hone
// (go install ./cmd/hone ./cmd/hone-jail-helper); hone uses it only when it
// implements the very jail hone was built with, and otherwise plays both
// parts itself.
//
// Run by hand, `hone-jail-helper id` prints which jail it implements.
package main

import (
	"fmt"
	"os"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/reexec"
)

func main() {
	if reexec.Init() {
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "id" {
		fmt.Println(jail.ImplementationID())
		return
	}
	fmt.Fprintln(os.Stderr, "hone-jail-helper: hone starts this program for its jails; `hone-jail-helper id` prints which jail it implements")
	os.Exit(2)
}
