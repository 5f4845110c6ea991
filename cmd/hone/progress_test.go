package main

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (control, term *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { control.Close() })
	if err := unix.IoctlSetPointerInt(int(control.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(control.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	term, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	return control, term
}

// Progress is drawn in place on a terminal, and is a plain line on a pipe
// or a buffer (what CI and agents read), so a long verdict is never
// minutes of silence; with --json stderr holds none of it.
func TestProgressIsDrawnOnATerminalAndPlainElsewhere(t *testing.T) {
	control, term := openPTY(t)
	(&IOStreams{ErrOut: term, ErrTTY: isTerminal(term)}).progress("step %d", 1)
	(&IOStreams{ErrOut: term, ErrTTY: isTerminal(term)}).endProgress()
	buf := make([]byte, 64)
	if err := control.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := control.Read(buf)
	if err != nil || !bytes.Contains(buf[:n], []byte("\r\x1b[Kstep 1")) {
		t.Errorf("terminal got %q, %v; want the progress line drawn in place", buf[:n], err)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	(&IOStreams{ErrOut: w, ErrTTY: isTerminal(w)}).progress("step %d", 2)
	(&IOStreams{ErrOut: w, ErrTTY: isTerminal(w)}).endProgress()
	w.Close()
	var got bytes.Buffer
	if _, err := got.ReadFrom(r); err != nil || got.String() != "hone: step 2\n" {
		t.Errorf("pipe got %q, %v; want one plain line", got.String(), err)
	}
	var b bytes.Buffer
	(&IOStreams{ErrOut: &b}).progress("step 3")
	(&IOStreams{ErrOut: &b, quiet: true}).progress("step 4")
	if b.String() != "hone: step 3\n" {
		t.Errorf("buffer got %q; want step 3 alone", b.String())
	}
}
