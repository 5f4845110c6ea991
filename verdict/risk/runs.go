package risk

import "fmt"

// Runs is the signal of a candidate whose bench runs each started more
// threads and processes than any of the baseline's: work handed to a
// helper (a timer's thread, a shell that wordexp starts) that a spelling
// can hide from the diff and the binary scan alike. Counts vary from run to
// run in programs whose runtime starts threads as it likes (Go's), so only
// a candidate whose fewest exceeds the baseline's most is flagged. A count
// of 0 is unknown and flags nothing.
func Runs(baseMax, candMin, candMax int) []string {
	if baseMax <= 0 || candMin <= baseMax {
		return nil
	}
	return []string{fmt.Sprintf("processes or threads in bench runs (each candidate run started %s, each baseline run at most %d)", span(candMin, candMax), baseMax)}
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
