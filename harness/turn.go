package harness

import (
	"context"
	"fmt"
	"time"
)

// drainAfterExit is how long a turn keeps reading stdout after the harness
// exited, so events written just before exiting are not lost.
const drainAfterExit = time.Second

// parseFunc turns one stdout line into events. An error means the harness
// reported that it cannot go on; its text is the harness's own words, and the
// turn fails with ErrReported after the events.
type parseFunc func(line []byte) ([]Event, error)

// turn runs one turn over p: it writes input, then yields parsed events until
// turn_complete, a timeout, the process's exit or ctx's end. firstDeadline,
// when set, is an earlier deadline that applies until ready() turns true
// (claude-code's startup handshake happens inside its first turn).
type turn struct {
	name    string
	proc    *Process
	timeout time.Duration
	parse   parseFunc
	startup time.Duration
	ready   func() bool
}

func (t *turn) run(ctx context.Context, input []byte, yield func(Event, error) bool) {
	fail := func(kind error, detail string, cause error) {
		yield(Event{}, &Error{Kind: kind, Harness: t.name, Detail: detail, Stderr: t.proc.Stderr(), Err: cause})
	}
	if !t.proc.Alive() {
		fail(ErrNotRunning, "it exited before this turn ("+exitStatus(t.proc)+")", nil)
		return
	}
	if !t.dropEarlier(yield) {
		return
	}
	if err := t.proc.Write(input); err != nil {
		fail(ErrExited, "could not send the message", err)
		return
	}
	turnTimer := time.NewTimer(t.timeout)
	defer turnTimer.Stop()
	var startTimer <-chan time.Time
	if t.startup > 0 && t.ready != nil && !t.ready() {
		st := time.NewTimer(t.startup)
		defer st.Stop()
		startTimer = st.C
	}
	lines := t.proc.Lines()
	var exited <-chan time.Time
	done := t.proc.Done()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				<-t.proc.Done()
				fail(t.exitedKind(), "it stopped before turn_complete ("+exitStatus(t.proc)+")", nil)
				return
			}
			events, err := t.parse(line)
			for _, ev := range events {
				if ev.Time.IsZero() {
					ev.Time = time.Now().UTC()
				}
				if !yield(ev, nil) || ev.Type == TurnComplete {
					return
				}
			}
			if err != nil {
				// The harness said it cannot go on (not logged in, out of
				// quota, a refusal): waiting for more would only burn turns.
				fail(ErrReported, err.Error(), nil)
				return
			}
			if startTimer != nil && t.ready() {
				startTimer = nil
			}
		case <-done:
			// Keep reading what it wrote before exiting, briefly.
			done = nil
			exited = time.After(drainAfterExit)
		case <-exited:
			fail(t.exitedKind(), "it stopped before turn_complete ("+exitStatus(t.proc)+")", nil)
			return
		case <-startTimer:
			fail(ErrStartup, fmt.Sprintf("not ready within the startup timeout of %s", t.startup), nil)
			return
		case <-turnTimer.C:
			fail(ErrTurnTimeout, fmt.Sprintf("no turn_complete within %s", t.timeout), nil)
			return
		case <-ctx.Done():
			yield(Event{}, ctx.Err())
			return
		}
	}
}

// dropEarlier empties what the harness wrote after the previous turn's
// turn_complete and before this turn's message: none of it answers this turn,
// so it is reported as an error event and never ends the turn. Output of an
// earlier turn that arrives later still is recognised by the parser, from the
// turn number the harness echoes (exec) or from the replay of this turn's
// message (claude-code).
func (t *turn) dropEarlier(yield func(Event, error) bool) bool {
	for {
		select {
		case line, ok := <-t.proc.Lines():
			if !ok {
				return true
			}
			if events, err := t.parse(line); len(events) > 0 || err != nil {
				if !yield(earlierOutput(line), nil) {
					return false
				}
			}
		default:
			return true
		}
	}
}

// earlierOutput is the error event recording a line that belongs to a turn
// that has already ended.
func earlierOutput(line []byte) Event {
	return Event{Type: ErrorEvent, Time: time.Now().UTC(), Message: fmt.Sprintf("ignored output of an earlier turn: %.200s", line)}
}

func (t *turn) exitedKind() error {
	if t.ready != nil && !t.ready() {
		return ErrStartup
	}
	return ErrExited
}

func exitStatus(p *Process) string {
	select {
	case <-p.Done():
	default:
		return "still running"
	}
	if err := p.ExitErr(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}
