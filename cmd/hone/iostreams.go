package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// IOStreams are the streams a command reads and writes, and what hone knows
// about them. main gives the process's own; tests give buffers and say
// whether they stand for terminals, so every branch of the output runs
// in-process.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// ErrTTY says ErrOut is a terminal: progress is drawn in place there,
	// and is a plain line elsewhere (CI logs and agents' shells).
	ErrTTY bool
	// Color says Out is a terminal and NO_COLOR is unset.
	Color bool

	// quiet is set while a command runs with --json: its stderr then holds
	// at most one JSON error object, so no progress goes there.
	quiet bool
}

// systemStreams are the process's own streams.
func systemStreams() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		ErrTTY: isTerminal(os.Stderr),
		Color:  os.Getenv("NO_COLOR") == "" && isTerminal(os.Stdout),
	}
}

// progress reports a phase or a batch on stderr: a status line drawn in
// place on a terminal, a plain line otherwise (a verdict is minutes of
// silence without it), nothing with --json.
func (s *IOStreams) progress(format string, args ...any) {
	switch {
	case s.quiet:
	case s.ErrTTY:
		fmt.Fprintf(s.ErrOut, "\r\x1b[K"+format, args...)
	default:
		fmt.Fprintf(s.ErrOut, "hone: "+format+"\n", args...)
	}
}

// endProgress clears the status line of a terminal.
func (s *IOStreams) endProgress() {
	if s.ErrTTY && !s.quiet {
		fmt.Fprint(s.ErrOut, "\r\x1b[K")
	}
}

// phase prints one progress line on stderr, terminal or not: a runner's
// stderr is a service's or a CI job's log, and an agent waiting for the
// fleet reads its shell's. Nothing with --json.
func (s *IOStreams) phase(format string, args ...any) {
	if !s.quiet {
		fmt.Fprintf(s.ErrOut, "hone "+format+"\n", args...)
	}
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
