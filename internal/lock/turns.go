package lock

import (
	"bytes"
	"slices"
	"strings"
	"time"
)

// A long lock's holders write how long they held it into a file beside it
// (<lock>.turns, one duration a line, the newest last), so that a waiter
// can be told when its turn is likely to come: the median of recent turns
// for the holder (less what it has already had) and for each waiter ahead.
// Only the holder writes the file, while it still holds the lock.

// keptTurns is how many recent turns the estimate is drawn from.
const keptTurns = 32

// turnsPath is the file of past turns of the lock on path.
func turnsPath(path string) string { return path + ".turns" }

// recordTurn appends a turn of length held to the lock's file of turns,
// keeping the newest keptTurns. It only informs estimates, so failing to
// write it must not fail the release.
func recordTurn(path string, held time.Duration) {
	f, err := open(turnsPath(path))
	if err != nil {
		return
	}
	defer f.Close()
	past := readTurns(f.Name())
	past = append(past, held)
	past = past[max(0, len(past)-keptTurns):]
	var b bytes.Buffer
	for _, d := range past {
		b.WriteString(d.Round(time.Millisecond).String() + "\n")
	}
	if f.Truncate(0) == nil {
		f.WriteAt(b.Bytes(), 0)
	}
}

// readTurns reads a file of turns; lines it cannot read are left out.
func readTurns(path string) []time.Duration {
	f, err := open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 64*keptTurns)
	n, _ := f.ReadAt(b, 0)
	var out []time.Duration
	for _, line := range strings.Split(string(b[:n]), "\n") {
		if d, err := time.ParseDuration(strings.TrimSpace(line)); err == nil && d >= 0 {
			out = append(out, d)
		}
	}
	return out
}

// medianTurn is the median of the recorded turns, 0 when none is known.
func medianTurn(path string) time.Duration {
	turns := readTurns(turnsPath(path))
	if len(turns) == 0 {
		return 0
	}
	slices.Sort(turns)
	return turns[len(turns)/2]
}

// expectedTurn is when a waiter with ahead waiters before it is likely to
// get the lock: the holder's remaining share of a median turn (none once
// it has had a median turn already), then a median turn for each waiter
// ahead. It is zero when no turn was ever recorded.
func expectedTurn(median time.Duration, holderSince time.Time, ahead int, now time.Time) time.Time {
	if median == 0 {
		return time.Time{}
	}
	left := median
	if !holderSince.IsZero() {
		left = max(0, median-now.Sub(holderSince))
	}
	return now.Add(left + time.Duration(ahead)*median)
}
