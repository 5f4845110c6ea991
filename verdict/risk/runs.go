package risk

import "fmt"

// Span is the fewest and the most tasks of one kind that one side's bench
// runs started; nil where the jail could not count them.
type Span struct{ Min, Max int }

// RunTasks is what one side's bench runs started: every task, and (where
// the jail told them apart) the processes and the threads beyond each
// process's first.
type RunTasks struct{ Tasks, Processes, Threads *Span }

// Runs is the signal of a candidate whose bench runs each started more
// threads, or more processes, than any of the baseline's: work handed to a
// helper (a timer's thread, a shell that wordexp starts) that a spelling
// can hide from the diff and the binary scan alike. Counts vary from run to
// run in programs whose runtime starts threads as it likes (Go's), so only
// a candidate whose fewest exceeds the baseline's most is flagged. Where
// the kinds are not told apart (an entry from before, a jail without the
// filter), or neither kind alone is flagged while the total is, the
// signal names both.
func Runs(base, cand RunTasks) []string {
	var out []string
	for _, k := range []struct {
		kind       string
		base, cand *Span
	}{{"processes", base.Processes, cand.Processes}, {"threads", base.Threads, cand.Threads}} {
		if more(k.base, k.cand, 0) {
			out = append(out, signal(k.kind, k.base, k.cand))
		}
	}
	if len(out) == 0 && more(base.Tasks, cand.Tasks, 1) {
		out = append(out, signal("processes or threads", base.Tasks, cand.Tasks))
	}
	return out
}

// more reports whether every candidate run started more than every
// baseline run; a baseline's most below least is unknown.
func more(base, cand *Span, least int) bool {
	return base != nil && cand != nil && base.Max >= least && cand.Min > base.Max
}

func signal(kind string, base, cand *Span) string {
	return fmt.Sprintf("%s in bench runs (each candidate run started %s, each baseline run at most %d)", kind, span(cand.Min, cand.Max), base.Max)
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
