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
