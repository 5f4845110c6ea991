package harness

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of harness failure. Test with errors.Is(err, harness.ErrTurnTimeout);
// every failure the package returns is an *Error carrying one of these.
var (
	ErrStartup     = errors.New("harness failed to start")
	ErrNotRunning  = errors.New("harness is not running")
	ErrTurnTimeout = errors.New("harness turn timed out")
	ErrExited      = errors.New("harness exited during the turn")
	ErrProtocol    = errors.New("harness broke its event protocol")
	// ErrReported is the harness's own account that it cannot go on: not
	// logged in, out of quota or rate-limited, a model refusal. Detail holds
	// its words.
	ErrReported = errors.New("harness reported an error")
)

// Error is a harness failure: its kind, which harness, what happened, and the
// last lines the harness wrote to stderr, which usually say why.
type Error struct {
	Kind    error // one of the Err* values above
	Harness string
	Detail  string
	Stderr  []string
	Err     error // underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v", e.Harness, e.Kind)
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if n := len(e.Stderr); n > 0 {
		// The tail is what names the cause; the full 50 lines stay in Stderr.
		tail := e.Stderr[max(0, n-3):]
		b.WriteString("; last stderr: " + strings.Join(tail, " | "))
	}
	return b.String()
}

func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }
