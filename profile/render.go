package profile

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/hone-perf/hone/internal/git"
)

// WriteText renders e for people: the header, the hotspot table and the
// counters. The CLI and the MCP server both use it, so they cannot drift.
func WriteText(w io.Writer, e *Entry) error {
	kind := "software event; this machine exposes no hardware cycle counter"
	if e.Hardware {
		kind = "hardware event"
	}
	if e.Source == "pprof" {
		kind = "from the pprof file the workload wrote"
	}
	fmt.Fprintf(w, "profile %s of %s at %s, %s\n", e.ID, e.Target, git.Short(e.Pin), e.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "event %s (%s), %d samples", e.Event, kind, e.Samples)
	if e.Frequency > 0 && e.Source == "perf" {
		fmt.Fprintf(w, " at %d Hz", e.Frequency)
	}
	fmt.Fprintln(w)
	if e.CallGraph != "" {
		fmt.Fprintf(w, "call graph %s", e.CallGraph)
		if e.CallGraphReason != "" {
			fmt.Fprintf(w, ": %s", e.CallGraphReason)
		}
		fmt.Fprintln(w)
	}
	if e.Binary != "" {
		fmt.Fprintf(w, "binary %s sha256:%s\n", e.Binary, git.Short(e.BinaryHash))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flat%\tcum%\tsamples\t  symbol  hottest line (its share)")
	for _, h := range e.Hotspots {
		fmt.Fprintf(tw, "%.2f\t%.2f\t%d\t  %s%s\n", h.FlatPct, h.CumPct, h.Samples, h.Label(), lineNote(h))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(e.Counters) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\ncounters (perf stat, one run)")
	cw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, c := range e.Counters {
		fmt.Fprintf(cw, "  %s\t%s\n", c.Name, counterValue(c))
	}
	return cw.Flush()
}

func lineNote(h Hotspot) string {
	if h.File == "" {
		return ""
	}
	return fmt.Sprintf("  %s:%d (%.2f%%)", h.File, h.Line, h.LinePct)
}

func counterValue(c Counter) string {
	switch {
	case !c.Supported:
		return "not supported here"
	case c.Value == nil:
		return "not counted"
	}
	v := strconv.FormatFloat(*c.Value, 'f', -1, 64)
	if c.Name == "ipc" {
		v = strconv.FormatFloat(*c.Value, 'f', 2, 64)
	}
	if c.Unit != "" {
		v += " " + c.Unit
	}
	return v
}

// WriteList renders one line per profile: id, time, pin, samples, top hotspot.
func WriteList(w io.Writer, es []*Entry) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, e := range es {
		top := "-"
		if len(e.Hotspots) > 0 {
			top = fmt.Sprintf("%s %.2f%%", e.Hotspots[0].Label(), e.Hotspots[0].FlatPct)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d samples\t%s\n", e.ID, e.Created.UTC().Format(time.RFC3339), git.Short(e.Pin), e.Event, e.Samples, top)
	}
	return tw.Flush()
}

// WriteDiff renders a comparison: one line per moved hotspot.
func WriteDiff(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "%s -> %s: top hotspot %s -> %s\n", c.A, c.B, c.TopA, c.TopB)
	if !c.SameEvent {
		fmt.Fprintln(w, "note: the two profiles sampled different events; shares may not compare")
	}
	if len(c.Moves) == 0 {
		fmt.Fprintf(w, "no hotspot share moved by %.1f points or more\n", c.MinMove)
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flat% a\tflat% b\tdelta\tcum% a\tcum% b\tdelta\t  symbol")
	for _, m := range c.Moves {
		status := ""
		if m.Status != "moved" {
			status = " (" + m.Status + ")"
		}
		fmt.Fprintf(tw, "%.2f\t%.2f\t%+.2f\t%.2f\t%.2f\t%+.2f\t  %s%s\n", m.FlatA, m.FlatB, m.FlatDelta, m.CumA, m.CumB, m.CumDelta, m.Symbol, status)
	}
	return tw.Flush()
}
