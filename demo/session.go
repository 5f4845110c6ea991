package demo

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
)

// Result is what one hone command did.
type Result struct {
	Stdout, Stderr []byte
	Code           int // exit status
}

// Runner runs the hone binary with args in dir. An error means the command
// could not be run at all; a non-zero exit is a Result.
type Runner func(ctx context.Context, dir string, args ...string) (Result, error)

// EventKind says which part of a step an Event reports.
type EventKind int

const (
	StepStarted    EventKind = iota // Step, Steps, Title, Say
	CommandStarted                  // Command: the hone command line, shell-quoted
	CommandOutput                   // Lines: what the command printed worth showing
	StepDone                        // Outcome, Elapsed
)

// Event reports the session's progress to the caller, which renders it.
type Event struct {
	Kind        EventKind
	Step, Steps int
	Title, Say  string
	Command     string
	Lines       []string
	Outcome     string
	Elapsed     time.Duration
}

// Session plays the scripted demo in a workspace made by Create.
type Session struct {
	Dir    string
	Run    Runner
	Report func(Event)

	// FixID and SlowID are the ids of the accepted fix and of the slower
	// patch, set by Play as it proposes them.
	FixID, SlowID string
}

type step struct {
	title, say string
	do         func(ctx context.Context, s *Session) (outcome string, err error)
}

// Play runs every step in order and stops at the first one whose outcome is
// not the expected one, returning an error that names the step.
func (s *Session) Play(ctx context.Context) error {
	steps := script()
	for i, st := range steps {
		s.Report(Event{Kind: StepStarted, Step: i + 1, Steps: len(steps), Title: st.title, Say: st.say})
		start := time.Now()
		outcome, err := st.do(ctx, s)
		if err != nil {
			return errs.Wrap(errs.CodeOf(err), err, "demo step %d (%s) did not go as expected", i+1, st.title)
		}
		s.Report(Event{Kind: StepDone, Step: i + 1, Steps: len(steps), Outcome: outcome, Elapsed: time.Since(start)})
	}
	return nil
}

// hone reports and runs one hone command.
func (s *Session) hone(ctx context.Context, args ...string) (Result, error) {
	s.Report(Event{Kind: CommandStarted, Command: ShellQuote(append([]string{"hone"}, args...))})
	res, err := s.Run(ctx, s.Dir, args...)
	if err != nil {
		return res, errs.Wrap(errs.Failure, err, "cannot run hone %s", strings.Join(args, " "))
	}
	return res, nil
}

// honeOK runs one hone command that must succeed.
func (s *Session) honeOK(ctx context.Context, args ...string) (Result, error) {
	res, err := s.hone(ctx, args...)
	if err != nil {
		return res, err
	}
	return res, expectCode(res, 0)
}

// show reports up to max lines of text (all when max is 0).
func (s *Session) show(text []byte, max int) {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return
	}
	if max > 0 && len(lines) > max {
		lines = append(lines[:max:max], "…")
	}
	s.Report(Event{Kind: CommandOutput, Lines: lines})
}

// expectCode fails unless res exited with want, quoting what hone said.
func expectCode(res Result, want int) error {
	if res.Code == want {
		return nil
	}
	msg := firstLine(res.Stderr)
	// With --json, hone reports a failure as {"error": {...}} on stderr.
	var je struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(msg), &je) == nil && je.Error.Message != "" {
		msg = "hone: " + je.Error.Message
	}
	if msg == "" {
		msg = firstLine(res.Stdout)
	}
	return errs.Failuref("exit status %d, want %d: %s", res.Code, want, msg)
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

// plainArg reports whether a shell reads a as one word without quotes.
func plainArg(a string) bool {
	return a != "" && strings.Trim(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:@%+,-") == ""
}

// ShellQuote renders args as a command line a POSIX shell reads back as the
// same words.
func ShellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if plainArg(a) {
			q[i] = a
		} else {
			q[i] = jail.Quote(a)
		}
	}
	return strings.Join(q, " ")
}

// lines joins what a step composed itself into text for show.
func lines(ss ...string) []byte { return []byte(strings.Join(ss, "\n")) }
