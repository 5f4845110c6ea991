package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
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

// printFrom is print for data that costs work or can fail only as JSON:
// data is called with --json alone.
func (o *output) printFrom(data func() (any, error), text func(w io.Writer) error) error {
	if !o.JSON {
		return text(o.io.Out)
	}
	v, err := data()
	if err != nil {
		return err
	}
	return writeJSON(o.io.Out, v)
}

// text writes on stdout for text output only: lines printed while a
// command runs, which its JSON gives whole at the end.
func (o *output) text(write func(w io.Writer)) {
	if !o.JSON {
		write(o.io.Out)
	}
}

// note prints a remark beside the data on stderr, for text output; with
// --json the data says it, or nothing does.
func (o *output) note(format string, args ...any) {
	if !o.JSON {
		fmt.Fprintf(o.io.ErrOut, "hone: "+format+"\n", args...)
	}
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

// childStderr is where a child process's stderr goes: the command's
// stderr for text output; with --json, the stream, one {key: LINE} object
// per line written (the child mirrors its stderr line by line), since
// stderr then holds at most hone's error object.
func (s *stream) childStderr(key string) io.Writer {
	if !s.out.JSON {
		return s.out.io.ErrOut
	}
	return stderrLines{s, key}
}

type stderrLines struct {
	s   *stream
	key string
}

func (l stderrLines) Write(p []byte) (int, error) {
	if err := l.s.emit(map[string]string{l.key: strings.TrimSuffix(string(p), "\n")}, func(io.Writer) {}); err != nil {
		return 0, err
	}
	return len(p), nil
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

// count is n with the noun in the number n calls for.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeColumns prints rows of cells aligned in columns two spaces apart, the
// last column unpadded, in one buffered write (tabwriter would hold every cell
// and write them one by one).
func writeColumns(out io.Writer, rows [][]string) error {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	w := bufio.NewWriter(out)
	for _, r := range rows {
		for i, c := range r {
			w.WriteString(c)
			if i == len(r)-1 {
				break
			}
			w.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
		}
		w.WriteByte('\n')
	}
	return w.Flush()
}

// verdictWord is a verdict as the ledger's tables show it: its flags are
// said beside the word, since the tables show nothing else of the verdict.
func verdictWord(word string, flags []string) string {
	if len(flags) == 0 {
		return dash(word)
	}
	marks := make([]string, len(flags))
	for i, f := range flags {
		marks[i] = flagMark(f)
	}
	return word + " (" + strings.Join(marks, ", ") + ")"
}

// flagMark is a flag as a table shows it: a short phrase.
func flagMark(flag string) string {
	if flag == ledger.FlagWeak {
		return "weak"
	}
	return strings.ReplaceAll(flag, "-", " ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// speedup renders a verdict's deciding speedup, "-" when it has none.
func speedup(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x)
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}
