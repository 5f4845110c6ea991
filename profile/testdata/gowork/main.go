// Command gowork spends about 70% of its CPU time in heavy and 30% in light,
// and writes a CPU profile to the file named by its second argument. The
// two take turns in rounds of a few milliseconds, so whatever slows the
// machine while it runs slows both alike.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

//go:noinline
func heavy(n int) uint64 {
	var s uint64
	for i := 0; i < n; i++ { // heavy's loop
		s += uint64(i*i) ^ (s >> 3) // heavy's body
	}
	return s
}

//go:noinline
func light(n int) uint64 {
	var s uint64
	for i := 0; i < n; i++ { // light's loop
		s += uint64(i*i) ^ (s >> 3) // light's body
	}
	return s
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	if len(os.Args) > 2 {
		f, err := os.Create(os.Args[2])
		if err != nil {
			panic(err)
		}
		// 100 Hz gives too few samples for a short run; the runtime warns
		// that the rate is already set, and keeps this one.
		runtime.SetCPUProfileRate(1000)
		if err := pprof.StartCPUProfile(f); err != nil {
			panic(err)
		}
		defer pprof.StopCPUProfile()
	}
	const rounds = 100
	var s uint64
	for r := 0; r < rounds; r++ {
		s += heavy(n/rounds/10*7) + light(n/rounds/10*3)
	}
	fmt.Println(s)
}
