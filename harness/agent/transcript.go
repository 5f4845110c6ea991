package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/workspace"
)

// transcriptDir is where runs keep their transcripts, under hone's state dir.
const transcriptDir = "transcripts"

// transcript writes the lines of one run. The transcript is the run's audit
// trail: the first write that fails is kept, every later write is refused,
// and the run stops at once rather than go on unrecorded.
type transcript struct {
	w    io.Writer
	enc  *json.Encoder
	path string
	err  error
}

func newTranscript(w io.Writer, path string) *transcript {
	return &transcript{w: w, enc: json.NewEncoder(w), path: path}
}

// write appends one line, or returns the error that stopped the transcript.
func (t *transcript) write(l Line) error {
	if t.err == nil {
		if err := t.enc.Encode(l); err != nil {
			t.err = errs.Wrap(errs.Failure, err, "cannot write the transcript %s; the run was stopped so that nothing goes unrecorded", t.path)
		}
	}
	return t.err
}

// close flushes the transcript to disk and reports the first error of the
// whole transcript, so a run never ends claiming a record it does not have.
func (t *transcript) close() error {
	f, ok := t.w.(*os.File)
	if !ok {
		return t.err
	}
	if err := f.Sync(); err != nil && t.err == nil {
		t.err = errs.Wrap(errs.Failure, err, "cannot write the transcript %s", t.path)
	}
	if err := f.Close(); err != nil && t.err == nil {
		t.err = errs.Wrap(errs.Failure, err, "cannot close the transcript %s", t.path)
	}
	return t.err
}

// openTranscript creates <git common dir>/hone/transcripts/<target>-<time>.jsonl.
func openTranscript(ws *workspace.Workspace, target string) (*transcript, error) {
	dir, err := ws.StateDir(transcriptDir)
	if err != nil {
		return nil, err
	}
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.jsonl", target, stamp))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create the transcript %s", path)
	}
	return newTranscript(f, path), nil
}

// TranscriptInfo describes one kept transcript.
type TranscriptInfo struct {
	Name    string    `json:"name"` // what `hone agent transcript NAME` takes
	Target  string    `json:"target"`
	Harness string    `json:"harness"`
	Started time.Time `json:"started"`
	Turns   int       `json:"turns"` // messages hone sent
	Bytes   int64     `json:"bytes"`
	Path    string    `json:"path"`
}

// Transcripts lists the kept transcripts, oldest first; with target set, only
// that target's.
func Transcripts(ws *workspace.Workspace, target string) ([]TranscriptInfo, error) {
	dir := ws.StatePath(transcriptDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []TranscriptInfo{}, nil
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list %s", dir)
	}
	out := []TranscriptInfo{}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		lines, err := ReadTranscript(ws, name)
		if err != nil {
			return nil, err
		}
		info := TranscriptInfo{Name: name, Path: filepath.Join(dir, e.Name())}
		if fi, err := e.Info(); err == nil {
			info.Bytes = fi.Size()
		}
		for _, l := range lines {
			switch {
			case l.Run != nil:
				info.Target, info.Harness, info.Started = l.Run.Target, l.Run.Harness, l.Run.Started
			case l.Message != "":
				info.Turns++
			}
		}
		if target == "" || info.Target == target {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b TranscriptInfo) int { return a.Started.Compare(b.Started) })
	return out, nil
}

// ReadTranscript returns the lines of the transcript called name (as
// Transcripts lists it; a path or a name with a directory is refused).
func ReadTranscript(ws *workspace.Workspace, name string) ([]Line, error) {
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return nil, errs.Usagef("transcript %q: give a name as `hone agent transcripts` lists it", name)
	}
	path := ws.StatePath(transcriptDir, name+".jsonl")
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errs.NotFoundf("no transcript %q; `hone agent transcripts` lists them", name)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s", path)
	}
	var out []Line
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, errs.Invalidf("transcript %s: line %d is not a transcript line: %v", name, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "transcript %s", name)
	}
	return out, nil
}
