// A small CPU-bound Go sample target: the same LCG walk repeated reps times.
package main

import "fmt"

const reps = 4

var sink uint64

//go:noinline
func walk(n uint64) uint64 {
	x := uint64(1)
	for i := uint64(0); i < n; i++ {
		x = (x*6364136223846793005 + 1442695040888963407) ^ (x >> 17)
	}
	sink = x
	return x
}

func main() {
	var r uint64
	for k := 0; k < reps; k++ {
		r = walk(2500000)
	}
	fmt.Println(r)
}
