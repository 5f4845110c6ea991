// Package errs defines hone's typed errors. Every error a command can return maps
// to one exit code here, and only here, so the CLI, the MCP server and the harness
// driver agree on what a failure means.
package errs

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Code is both the process exit status and, through Name, the stable error code in
// JSON error objects. Values are part of hone's public contract.
type Code int

const (
	Failure     Code = 1  // hone or its environment failed (git, perf, disk)
	Usage       Code = 2  // unknown flag, missing or extra argument
	Policy      Code = 3  // refused by policy: allowlist, protected path, duplicate attempt, worktree rule
	NotFound    Code = 4  // unknown target, patch, entry, playbook class, path at the pin
	Invalid     Code = 5  // malformed diff, hone.toml error, corrupt ledger entry
	Busy        Code = 8  // a lock held by another live process
	NotAccepted Code = 10 // hone verdict --exit-code only: a verdict other than accepted
)

// Name is the stable, snake_case identifier used in `{"error": {"code": ...}}`.
func (c Code) Name() string {
	switch c {
	case Failure:
		return "failure"
	case Usage:
		return "usage"
	case Policy:
		return "policy"
	case NotFound:
		return "not_found"
	case Invalid:
		return "invalid"
	case Busy:
		return "busy"
	case NotAccepted:
		return "not_accepted"
	}
	return "failure"
}

// Error carries a code and a one-line message meant for the user. Err, when set,
// is the underlying cause; it is reachable through errors.Is/As but its text is not
// repeated in Error() unless the message is empty.
type Error struct {
	Code Code
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	switch {
	case e.Msg != "":
		return e.Msg
	case e.Err != nil:
		return e.Err.Error()
	}
	return e.Code.Name()
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with the given code and a formatted message. String
// arguments longer than MaxArg bytes are clipped (see Clip), so a message
// that names a user's input never echoes a large one back.
func New(code Code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, clipArgs(args)...)}
}

// Wrap attaches a code and message to a cause. The message should already say
// what went wrong; the cause's text is appended after ": " when it adds detail.
// Arguments are clipped as in New.
func Wrap(code Code, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, clipArgs(args)...)
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Error{Code: code, Msg: msg, Err: err}
}

// CodeOf returns the exit code for err: 0 for nil, the code of the outermost
// *Error in its chain, and Failure for anything untyped.
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failure
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }

// Shorthands keep call sites readable: errs.NotFoundf("no target %q", name).
func Usagef(format string, args ...any) error    { return New(Usage, format, args...) }
func Policyf(format string, args ...any) error   { return New(Policy, format, args...) }
func NotFoundf(format string, args ...any) error { return New(NotFound, format, args...) }
func Invalidf(format string, args ...any) error  { return New(Invalid, format, args...) }
func Busyf(format string, args ...any) error     { return New(Busy, format, args...) }
func Failuref(format string, args ...any) error  { return New(Failure, format, args...) }

// MaxArg is the most bytes of one string argument an error message quotes.
const MaxArg = 512

// Clip returns s, or when it is longer than MaxArg bytes its start and its
// length (see ClipTo).
func Clip(s string) string { return ClipTo(s, MaxArg) }

// ClipTo returns s, or when it is longer than max bytes its first bytes, cut
// on a character boundary, and how long it was.
func ClipTo(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

// clipArgs returns args with long strings clipped, copying the slice only
// when something is clipped.
func clipArgs(args []any) []any {
	out := args
	for i, a := range args {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		default:
			continue
		}
		if len(s) <= MaxArg {
			continue
		}
		if &out[0] == &args[0] {
			out = append([]any(nil), args...)
		}
		out[i] = Clip(s)
	}
	return out
}
