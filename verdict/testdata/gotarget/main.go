// A small CPU-bound Go sample target: the same LCG walk repeated reps times,
// from a start the verdict's seed gives (the first argument). It declares
// the steps it walked (hone-work: N on stderr), which the test builds' work
// meter measures instead of the clock.
package main

import (
	"fmt"
	"os"
	"strconv"
)

const reps = 4

var sink, start, work uint64 = 0, 1, 0

//go:noinline
func walk(n uint64) uint64 {
	x := start
	for i := uint64(0); i < n; i++ {
		x = (x*6364136223846793005 + 1442695040888963407) ^ (x >> 17)
	}
	sink = x
	work += n
	return x
}

func main() {
	if len(os.Args) > 1 {
		start, _ = strconv.ParseUint(os.Args[1], 10, 64)
		start |= 1
	}
	var r uint64
	for k := 0; k < reps; k++ {
		r = walk(2500000)
	}
	fmt.Println(r)
	fmt.Fprintf(os.Stderr, "hone-work: %d\n", work)
}
