package risk

import (
	"fmt"
	"time"
)

// Work a patch moves out of its runs and into its build (a table the
// build computes, a constant folded at compile time from a generator the
// patch runs) makes the runs cheaper without making the program faster
// for anyone who builds it once and runs it on new inputs. A build that
// costs at least twice the baseline's, and a second more, beside runs that
// got faster, is such a patch until a person says otherwise.
const (
	buildFactor = 2
	buildMargin = time.Second
)

// BuildWork is the signal of a candidate whose build cost far more than
// the baseline's while its runs got faster (speedup above 1). A baseline
// cost of 0 is unknown (a cache entry made before builds were timed) and
// flags nothing.
func BuildWork(base, cand time.Duration, speedup float64) []string {
	if base <= 0 || speedup <= 1 || cand < buildFactor*base || cand-base < buildMargin {
		return nil
	}
	return []string{fmt.Sprintf("build-work (the candidate's build took %.1fs of CPU, the baseline's %.1fs, while its runs got %.2fx faster)",
		cand.Seconds(), base.Seconds(), speedup)}
}
