package harness

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeExec is the path of testdata/fakeexec, built once for the package's tests.
var fakeExec string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "harness-test-")
	if err != nil {
		panic(err)
	}
	fakeExec = filepath.Join(dir, "fakeexec")
	if out, err := exec.Command("go", "build", "-o", fakeExec, "./testdata/fakeexec").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("building fakeexec: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startFake starts the fake exec harness in mode and stops it at test end.
func startFake(t *testing.T, mode string, cfg Config) Adapter {
	t.Helper()
	cfg.Name = "exec"
	cfg.Command = []string{fakeExec}
	cfg.Env = append(cfg.Env, "FAKE_MODE="+mode)
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.InjectTools([]Tool{{Name: "read_profile"}}, Bridge{Name: "hone", Command: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return a
}

func TestExecTwoTurns(t *testing.T) {
	ctx := context.Background()
	a := startFake(t, "echo", Config{})
	if err := a.Start(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if !a.IsAlive() {
		t.Fatal("IsAlive = false after Start")
	}
	r, err := SendMessage(ctx, a, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "hello" || r.Done {
		t.Errorf("turn 1: text %q done %v; want hello, false", r.Text, r.Done)
	}
	var types []EventType
	for _, ev := range r.Events {
		types = append(types, ev.Type)
		if ev.Time.IsZero() {
			t.Errorf("%s event has no time", ev.Type)
		}
	}
	if got := strings.Join(toStrings(types), " "); got != "llm_request text_output turn_complete" {
		t.Errorf("turn 1 events: %s", got)
	}
	r, err = SendMessage(ctx, a, "bye now")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Done {
		t.Error("turn 2: done = false; want true")
	}
}

// The program answers each message, then writes an afterthought and a second,
// late turn_complete (and, in late-v1, a fatal error). Each turn must still
// answer with its own turn_complete, and report every leftover line.
func TestExecOutputAfterTurnCompleteIsNotTheNextAnswer(t *testing.T) {
	for mode, leftovers := range map[string]int{"late": 2, "late-v1": 3} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			a := startFake(t, mode, Config{})
			if err := a.Start(ctx, t.TempDir()); err != nil {
				t.Fatal(err)
			}
			for _, msg := range []string{"one", "two", "three"} {
				if mode == "late-v1" && msg != "one" {
					// A program that does not echo the turn number is told
					// apart only by timing: its leftovers must have arrived.
					waitBuffered(t, a.(*execAdapter).proc, leftovers)
				}
				r, err := SendMessage(ctx, a, msg)
				if err != nil {
					t.Fatal(err)
				}
				if r.Text != "answer "+msg {
					t.Fatalf("turn %q answered %q; want %q", msg, r.Text, "answer "+msg)
				}
				if msg == "one" {
					continue
				}
				var ignored int
				for _, ev := range r.Events {
					if ev.Type == ErrorEvent && strings.HasPrefix(ev.Message, "ignored output of an earlier turn") {
						ignored++
					}
				}
				if ignored != leftovers {
					t.Errorf("turn %q events %+v; want the %d leftover lines reported", msg, r.Events, leftovers)
				}
			}
		})
	}
}

func waitBuffered(t *testing.T, p *Process, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(p.Lines()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d lines buffered after 10s; want %d", len(p.Lines()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestExecFatalErrorEndsTheTurn(t *testing.T) {
	a := startFake(t, "fatal", Config{})
	if err := a.Start(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	r, err := SendMessage(context.Background(), a, "go")
	if !errors.Is(err, ErrReported) || err.Error() != "exec: harness reported an error: Not logged in" {
		t.Fatalf("SendMessage: %v; want ErrReported with the program's words", err)
	}
	if len(r.Events) != 1 || r.Events[0].Type != LLMRequest {
		t.Errorf("events %+v; want only the llm_request before the error", r.Events)
	}
}

func toStrings(ts []EventType) []string {
	var s []string
	for _, t := range ts {
		s = append(s, string(t))
	}
	return s
}

func TestStartupFailures(t *testing.T) {
	for _, tc := range []struct {
		mode, want string
		// The timeout decides only the program that never says ready; the
		// one that says something else at once has a minute, so that a
		// start slowed by a busy machine cannot run into the timeout first.
		timeout time.Duration
	}{
		{"never-ready", "startup timeout of 300ms", 300 * time.Millisecond},
		{"bad-ready", "first line must be", time.Minute},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			a := startFake(t, tc.mode, Config{StartupTimeout: tc.timeout, StopGrace: time.Second})
			err := a.Start(context.Background(), t.TempDir())
			if !errors.Is(err, ErrStartup) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v; want ErrStartup saying %q", err, tc.want)
			}
			if a.IsAlive() {
				t.Error("a failed start left the harness running")
			}
		})
	}
}

func TestStartMissingProgram(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	a, err := New(Config{Name: "exec", Command: []string{filepath.Join(t.TempDir(), "no-such-harness")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background(), ""); !errors.Is(err, ErrStartup) {
		t.Fatalf("Start: %v; want ErrStartup", err)
	}
	// A failed start needs no Stop: what it wrote for the harness is gone.
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("a failed Start left %s in TMPDIR", left[0].Name())
	}
}

func TestTurnTimeout(t *testing.T) {
	a := startFake(t, "hang", Config{TurnTimeout: 300 * time.Millisecond})
	if err := a.Start(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	r, err := SendMessage(context.Background(), a, "go")
	if !errors.Is(err, ErrTurnTimeout) || !strings.Contains(err.Error(), "within 300ms") {
		t.Fatalf("SendMessage: %v; want ErrTurnTimeout", err)
	}
	if len(r.Events) != 1 || r.Events[0].Text != "thinking" {
		t.Errorf("events before the timeout: %+v; want the one text_output", r.Events)
	}
}

func TestCrashMidTurn(t *testing.T) {
	a := startFake(t, "crash", Config{})
	if err := a.Start(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	r, err := SendMessage(context.Background(), a, "go")
	var he *Error
	if !errors.As(err, &he) || he.Kind != ErrExited {
		t.Fatalf("SendMessage: %v; want ErrExited", err)
	}
	if !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "out of ideas") {
		t.Errorf("error %q does not name the exit status and the last stderr line", err)
	}
	if len(r.Events) != 1 || r.Events[0].Type != ToolCall {
		t.Errorf("events before the crash: %+v; want the tool_call", r.Events)
	}
	if a.IsAlive() {
		t.Error("IsAlive = true after the crash")
	}
	if _, err := SendMessage(context.Background(), a, "again"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("a turn after the crash: %v; want ErrNotRunning", err)
	}
}

func TestStop(t *testing.T) {
	t.Run("never started", func(t *testing.T) {
		a, _ := New(Config{Name: "exec", Command: []string{fakeExec}})
		for i := 0; i < 2; i++ {
			if err := a.Stop(context.Background()); err != nil {
				t.Fatalf("Stop #%d: %v", i+1, err)
			}
		}
		if _, err := SendMessage(context.Background(), a, "x"); !errors.Is(err, ErrNotRunning) {
			t.Errorf("SendMessage before Start: %v; want ErrNotRunning", err)
		}
	})
	t.Run("twice", func(t *testing.T) {
		a := startFake(t, "echo", Config{})
		if err := a.Start(context.Background(), t.TempDir()); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := a.Stop(context.Background()); err != nil {
				t.Fatalf("Stop #%d: %v", i+1, err)
			}
		}
		if a.IsAlive() {
			t.Error("IsAlive = true after Stop")
		}
	})
	t.Run("ignores SIGTERM", func(t *testing.T) {
		a := startFake(t, "stubborn", Config{StopGrace: 200 * time.Millisecond})
		if err := a.Start(context.Background(), t.TempDir()); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		if err := a.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if a.IsAlive() {
			t.Error("still alive after Stop")
		}
		if d := time.Since(begin); d < 200*time.Millisecond || d > 5*time.Second {
			t.Errorf("Stop took %s; want SIGKILL right after the 200ms grace", d)
		}
	})
}

func TestProcessKeepsLastStderrLines(t *testing.T) {
	p, err := StartProcess([]string{"sh", "-c", "i=0; while [ $i -lt 120 ]; do i=$((i+1)); echo line$i >&2; done"}, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	// stderr is read concurrently with the exit; wait for its last line.
	deadline := time.Now().Add(5 * time.Second)
	for {
		lines := p.Stderr()
		if len(lines) == StderrLines && lines[len(lines)-1] == "line120" {
			if lines[0] != "line71" {
				t.Errorf("first kept line %q; want line71", lines[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kept %d lines ending %q; want %d ending line120", len(lines), lines[len(lines)-1], StderrLines)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Stop(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
}
