package harness

import (
	"context"
	"fmt"
	"time"
)

// drainAfterExit is how long a turn keeps reading stdout after the harness
// exited, so events written just before exiting are not lost.
const drainAfterExit = time.Second

// parseFunc turns one stdout line into events. An error means the line broke
// the protocol badly enough that the turn cannot go on.
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
			if err != nil {
				fail(ErrProtocol, err.Error(), nil)
				return
			}
			for _, ev := range events {
				if ev.Time.IsZero() {
					ev.Time = time.Now().UTC()
				}
				if !yield(ev, nil) || ev.Type == TurnComplete {
					return
				}
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
