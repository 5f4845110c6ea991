package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
)

// output is how a command prints its data: the one place that decides
// between JSON (--json) and text. A command hands it the data and its text
// rendering; with --json the data is the whole output, warnings included,
// and stderr holds at most the error object (see writeError).
type output struct {
	io   *IOStreams
	JSON bool
}

// addJSONFlag gives cmd its --json flag, bound to o.
func addJSONFlag(cmd *cobra.Command, o *output, usage string) {
	cmd.Flags().BoolVar(&o.JSON, "json", false, usage)
}

// print writes v as JSON with --json, else calls text on stdout.
func (o *output) print(v any, text func(w io.Writer) error) error {
	if o.JSON {
		return writeJSON(o.io.Out, v)
	}
	return text(o.io.Out)
}

// warn prints warnings as lines on stderr, for text output; with --json
// they belong in the data instead.
func (o *output) warn(ws ...errs.Warning) {
	if o.JSON {
		return
	}
	for _, w := range ws {
		fmt.Fprintln(o.io.ErrOut, "hone: warning: "+w.Message)
	}
}

// writeJSON writes v as indented JSON with a trailing newline, HTML left
// unescaped (entries hold shell commands and diffs).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeError prints a failed command's error, the only place one is
// printed: one line on stderr, or with --json the object
// {"error": {"code", "exit_code", "message"}}. It returns the exit status
// the error's code maps to. A NotAccepted verdict (--exit-code) was
// already printed as the verdict, so as text it adds nothing.
func writeError(w io.Writer, err error, asJSON bool) int {
	code := errs.CodeOf(err)
	msg := errs.ClipTo(oneLine(err.Error()), maxMessage)
	if asJSON {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code.Name(), "exit_code": int(code), "message": msg}})
		fmt.Fprintln(w, string(b))
	} else if code != errs.NotAccepted {
		fmt.Fprintln(w, "hone: "+msg)
	}
	return int(code)
}

// stream prints data as it happens, for commands that report a run event
// by event: one JSON value per line with --json, text otherwise. Events
// arrive from several goroutines (a harness's events and its stderr), so
// each write is whole.
type stream struct {
	out *output
	mu  sync.Mutex
	enc *json.Encoder
}

func (o *output) stream() *stream {
	enc := json.NewEncoder(o.io.Out)
	enc.SetEscapeHTML(false)
	return &stream{out: o, enc: enc}
}

// emit writes v as one JSON line with --json, else what text writes.
func (s *stream) emit(v any, text func(w io.Writer)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.JSON {
		return s.enc.Encode(v)
	}
	text(s.out.io.Out)
	return nil
}
