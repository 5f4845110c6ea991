// Package perfstat reads the CSV that `perf stat -x,` writes, for the two
// places hone counts events: verdict's counters and probe, and profile's
// counters.
package perfstat

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// Reading is one event line of perf stat's CSV output.
type Reading struct {
	Event   string  // as perf printed it, modifiers included ("instructions:u")
	Unit    string  // "msec" for task-clock; often empty
	Raw     string  // the value field as printed: a number, "<not supported>", "<not counted>"
	Value   float64 // the count, when Counted
	Counted bool    // Raw is a number
}

// Parse returns the event lines of out in order, skipping comments, blank
// lines and lines too short to be events.
func Parse(out []byte) []Reading {
	var rs []Reading
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		r := Reading{Event: f[2], Unit: f[1], Raw: f[0]}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			r.Value, r.Counted = v, true
		}
		rs = append(rs, r)
	}
	return rs
}
