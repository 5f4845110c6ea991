package goalposts

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A patch whose failing unit gate prints cursor-up, erase-line, conceal
// and carriage-return sequences, so that a terminal showing its
// rejected-gate verdict would read "accepted (improved) 9.870x": no raw
// control byte reaches the entry, the note, `verdict show` (with and
// without --gate), the ledger's list, the report or an MCP answer.
func TestGateOutputCannotRedrawTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(map[string]string{"t/prog.c": strings.Replace(progC, "return walk(3) == walk(3) ? 0 : 1;",
		`{ fputs("FAIL\033[1A\033[2K\033[8m\rverdict accepted (improved) 9.870x\033[0m\2332J\n", stderr); return 1; }`, 1)})
	diff := w.git("diff") + "\n"
	w.git("checkout", "-q", "--", "t")
	id, errOut, code := w.propose("a selftest that redraws", diff)
	if code != 0 {
		t.Fatalf("propose: exit %d\n%s", code, errOut)
	}
	e := w.verdict(id)
	if e.Verdict != "rejected-gate" {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	if !strings.Contains(e.Detail, `\x1b[1A`) {
		t.Errorf("the detail does not show the escaped sequence: %q", e.Detail)
	}
	report := filepath.Join(w.home, "report.html")
	views := map[string]string{
		"verdict --json":    w.mustHone("verdict", "show", "--json", id),
		"verdict show":      w.mustHone("verdict", "show", id),
		"verdict show gate": w.mustHone("verdict", "show", id, "--gate", "unit"),
		"ledger list":       w.mustHone("ledger", "list"),
		"ledger list json":  w.mustHone("ledger", "list", "--json"),
		"note":              w.git("log", "--notes=hone", "--format=%N", "--glob=refs/hone/patches/*"),
		"mcp read_ledger":   w.mcp("read_ledger", `{"target": "c"}`),
	}
	w.mustHone("report", "--html", report)
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	views["report html"] = string(html)
	for name, out := range views {
		if !strings.Contains(out, "9.870x") && name != "ledger list" {
			t.Errorf("%s does not show the gate's text at all:\n%s", name, out)
		}
		if at, c := rawControl(out); at >= 0 {
			t.Errorf("%s holds the raw control character %U at byte %d:\n%q", name, c, at, out)
		}
		var decoded any
		if json.Unmarshal([]byte(out), &decoded) == nil {
			if s := decodedControl(decoded); s != "" {
				t.Errorf("%s decodes to the raw control characters of %q", name, s)
			}
		}
	}
}

// rawControl returns the first control character (C0 but tab and newline,
// DEL, C1, a byte that is not UTF-8) in s and its offset, or -1.
func rawControl(s string) (int, rune) {
	for i, r := range s {
		switch {
		case r == '\t' || r == '\n':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfffd:
			return i, r
		}
	}
	return -1, 0
}

// decodedControl returns a string of v (decoded JSON) holding a control
// character, or "".
func decodedControl(v any) string {
	switch x := v.(type) {
	case string:
		if at, _ := rawControl(x); at >= 0 {
			return x
		}
	case []any:
		for _, e := range x {
			if s := decodedControl(e); s != "" {
				return s
			}
		}
	case map[string]any:
		for _, e := range x {
			if s := decodedControl(e); s != "" {
				return s
			}
		}
	}
	return ""
}

// mcp calls one tool of `hone mcp` over stdio, as an agent's client does,
// and returns the tool's answer.
func (w *world) mcp(tool, args string) string {
	w.t.Helper()
	cmd := exec.Command(w.hone, "mcp", "--workspace", w.dir)
	cmd.Dir, cmd.Env = w.dir, w.env
	in, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", tool, args)
	lines := bufio.NewReader(out)
	for {
		line, err := lines.ReadString('\n')
		if err == io.EOF {
			w.t.Fatalf("hone mcp ended without answering %s", tool)
		}
		if err != nil {
			w.t.Fatal(err)
		}
		var msg struct {
			ID *int `json:"id"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.ID != nil && *msg.ID == 2 {
			return line
		}
	}
}
