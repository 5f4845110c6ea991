// Package gobench is the code under test of benchformat's tests, playing
// both an honest library and a candidate gaming its benchmarks: CHEAT
// answers without doing the work, HIDE does the work for the benchmark's
// inputs in init, before any benchmark timer starts, and reports on stderr
// the CPU time that took ("init-cpu-ns: N", the process's own count) and,
// at the end, how many calls of Work mixed rather than looked their answer
// up ("mixed-after-init: N"): zero when every timed iteration was a lookup.
package gobench

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

var (
	seed, _ = strconv.ParseUint(os.Getenv("HONE_SEED"), 10, 64)
	cheat   = os.Getenv("CHEAT") != ""
	hidden  map[uint64]uint64
	// mixed counts the calls of Work that did the work themselves.
	mixed int
)

func init() {
	n, _ := strconv.Atoi(os.Getenv("HIDE"))
	if n > 0 {
		hidden = make(map[uint64]uint64, n)
		for i := range uint64(n) {
			hidden[seed+i] = mix(seed+i, 1000)
		}
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
			fmt.Fprintf(os.Stderr, "init-cpu-ns: %d\n", ru.Utime.Nano()+ru.Stime.Nano())
		}
	}
}

// Work mixes x n times; its result depends on every step.
func Work(x uint64, n int) uint64 {
	if cheat {
		return 42
	}
	if v, ok := hidden[x]; ok && n == 1000 {
		return v
	}
	mixed++
	return mix(x, n)
}

// ReportHidden prints, for a hiding run, how many calls of Work mixed.
func ReportHidden() {
	if hidden != nil {
		fmt.Fprintf(os.Stderr, "mixed-after-init: %d\n", mixed)
	}
}

func mix(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}
