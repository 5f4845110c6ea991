package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/workspace"
)

// failAfter accepts n writes, then fails every later one, as a full disk does.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("no space left on device")
	}
	f.n--
	return len(p), nil
}

// TestRunStopsWhenItsTranscriptCannotBeWritten: the transcript is the run's
// audit trail, so a run whose transcript stops being written stops too, with
// an error naming the transcript, before another turn is sent.
func TestRunStopsWhenItsTranscriptCannotBeWritten(t *testing.T) {
	ws := newWorkspace(t)
	for _, accepted := range []int{0, 1, 2} {
		opts := options(ws, "echo")
		opts.Turns = 3
		sent := 0
		opts.OnMessage = func(int, string) { sent++ }
		opts.openTranscript = func(*workspace.Workspace, string) (*transcript, error) {
			return newTranscript(&failAfter{n: accepted}, "/dev/test-transcript"), nil
		}
		res, err := Run(context.Background(), ws, opts)
		if err == nil || errs.CodeOf(err) != errs.Failure || !strings.Contains(err.Error(), "cannot write the transcript /dev/test-transcript") {
			t.Fatalf("after %d lines: Run: %v; want a failure naming the transcript", accepted, err)
		}
		if res == nil || res.Turns != 0 || sent > 1 {
			t.Errorf("after %d lines: %+v, %d messages sent; want the run stopped in its first turn", accepted, res, sent)
		}
	}
}

// TestTranscriptsCanBeReadBack lists a run's transcript and reads it back by
// the name the listing gives, as `hone agent transcript(s)` do.
func TestTranscriptsCanBeReadBack(t *testing.T) {
	ws := newWorkspace(t)
	if list, err := Transcripts(ws, ""); err != nil || len(list) != 0 {
		t.Fatalf("before any run: %v, %v; want none", list, err)
	}
	opts := options(ws, "echo")
	opts.Turns = 2
	res, err := Run(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	list, err := Transcripts(ws, "spin")
	if err != nil || len(list) != 1 {
		t.Fatalf("Transcripts: %+v, %v; want one", list, err)
	}
	got := list[0]
	if got.Target != "spin" || got.Harness != "exec" || got.Turns != 2 || got.Path != res.Transcript || got.Bytes == 0 || got.Started.IsZero() {
		t.Errorf("listed %+v; run %+v", got, res)
	}
	if other, err := Transcripts(ws, "other"); err != nil || len(other) != 0 {
		t.Errorf("another target's transcripts: %+v, %v", other, err)
	}
	lines, err := ReadTranscript(ws, got.Name)
	if err != nil {
		t.Fatal(err)
	}
	if lines[0].Run == nil || lines[1].Turn != 1 || lines[1].Message == "" || lines[len(lines)-1].Event == nil {
		t.Errorf("read back %+v", lines)
	}
	for name, code := range map[string]errs.Code{
		"../" + got.Name:              errs.Usage,
		filepath.Base(res.Transcript): errs.NotFound, // the file name, not the name
		"spin-19700101":               errs.NotFound,
		"":                            errs.Usage,
	} {
		if _, err := ReadTranscript(ws, name); errs.CodeOf(err) != code {
			t.Errorf("ReadTranscript(%q): %v; want %s", name, err, code.Name())
		}
	}
	if err := os.WriteFile(ws.StatePath(transcriptDir, "broken.jsonl"), []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTranscript(ws, "broken"); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("a corrupt transcript: %v; want invalid", err)
	}
}
