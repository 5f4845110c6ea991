package errs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Every kind of error maps to its documented exit code, through any wrapping.
func TestEveryCodeIsItsExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code Code
		name string
	}{
		{nil, 0, ""},
		{errors.New("plain"), Failure, "failure"},
		{Failuref("x"), Failure, "failure"},
		{Usagef("x"), Usage, "usage"},
		{Policyf("x"), Policy, "policy"},
		{NotFoundf("x"), NotFound, "not_found"},
		{Invalidf("x"), Invalid, "invalid"},
		{Busyf("x"), Busy, "busy"},
		{New(NotAccepted, "x"), NotAccepted, "not_accepted"},
		{fmt.Errorf("context: %w", Policyf("x")), Policy, "policy"},
		{Wrap(Invalid, Policyf("inner"), "outer"), Invalid, "invalid"},
	} {
		if got := CodeOf(tc.err); got != tc.code {
			t.Errorf("CodeOf(%v) = %d, want %d", tc.err, got, tc.code)
		}
		if tc.err != nil && CodeOf(tc.err).Name() != tc.name {
			t.Errorf("%v: code name %q, want %q", tc.err, CodeOf(tc.err).Name(), tc.name)
		}
	}
}

// A message that names a huge input (an agent's megabyte hypothesis, a
// pasted file as a target name) never carries it whole.
func TestErrorNeverEchoesAHugeInput(t *testing.T) {
	huge := strings.Repeat("é", 1<<19) // 1 MiB of two-byte characters
	for _, err := range []error{
		NotFoundf("no target %q", huge),
		Wrap(Policy, errors.New("cause"), "refused %s", []byte(huge)),
	} {
		if n := len(err.Error()); n > 2*MaxArg {
			t.Errorf("message is %d bytes, want at most %d", n, 2*MaxArg)
		}
		if !strings.Contains(err.Error(), "1048576 bytes in all") {
			t.Errorf("message does not say how long the input was: %.100s", err.Error())
		}
	}
	args := []any{huge}
	_ = New(Usage, "%s", args...)
	if args[0] != huge {
		t.Error("New changed its caller's arguments")
	}
	if got := Clip("short"); got != "short" {
		t.Errorf("Clip(short) = %q", got)
	}
}
