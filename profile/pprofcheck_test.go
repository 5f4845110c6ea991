package profile

import (
	"bufio"
	"bytes"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pprofRow is one row of `go tool pprof -lines -top`.
type pprofRow struct {
	flat  string // as printed ("933.47ms", "0")
	fn    string
	where string // "file:line", empty for code without line numbers
}

var fileLine = regexp.MustCompile(`^\S+:\d+$`)

// pprofLines runs `go tool pprof -lines -top` on file, every node kept, and
// returns its rows, biggest flat first.
func pprofLines(t *testing.T, file string) []pprofRow {
	t.Helper()
	return pprofRows(t, file, "-lines", "-top", "-nodefraction=0", "-nodecount=100000")
}

// pprofTop runs `go tool pprof -top` on file and returns the symbols in its
// order.
func pprofTop(t *testing.T, file string) []string {
	t.Helper()
	var syms []string
	for _, r := range pprofRows(t, file, "-top") {
		syms = append(syms, r.fn)
	}
	return syms
}

// pprofRows runs go tool pprof with args on file and parses its table.
func pprofRows(t *testing.T, file string, args ...string) []pprofRow {
	t.Helper()
	out, err := exec.Command("go", append(append([]string{"tool", "pprof"}, args...), file)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
	}
	var rows []pprofRow
	header := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(strings.TrimSuffix(sc.Text(), " (inline)"))
		if len(f) >= 5 && f[0] == "flat" {
			header = true
			continue
		}
		if !header || len(f) < 6 {
			continue
		}
		r := pprofRow{flat: f[0], fn: strings.Join(f[5:], " ")}
		if last := f[len(f)-1]; len(f) > 6 && fileLine.MatchString(last) {
			r.fn, r.where = strings.Join(f[5:len(f)-1], " "), last
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatalf("go tool pprof %v printed no rows:\n%s", args, out)
	}
	return rows
}

// agreesWithPprofLines checks that the hottest line of every hotspot with
// at least minFlat percent of own time is a line to which `go tool pprof
// -lines` gives that function's biggest flat weight (pprof breaks ties its
// own way, so equal weights agree). It returns the checked lines, for logs.
func agreesWithPprofLines(t *testing.T, hs []Hotspot, file string, minFlat float64) []string {
	t.Helper()
	rows := pprofLines(t, file)
	var checked []string
	for _, h := range hs {
		if h.FlatPct < minFlat || h.Line == 0 {
			continue
		}
		top, mine := "", ""
		for _, r := range rows {
			if r.fn != h.Symbol || r.where == "" {
				continue
			}
			if top == "" {
				top = r.flat
			}
			if r.where == h.File+":"+strconv.Itoa(h.Line) {
				mine = r.flat
				break
			}
		}
		if top == "" || mine != top || top == "0" {
			t.Errorf("%s: hone's hottest line %s:%d has flat %q in go tool pprof -lines, whose biggest for it is %q; rows: %+v", h.Symbol, h.File, h.Line, mine, top, rowsOf(rows, h.Symbol))
			continue
		}
		checked = append(checked, h.Symbol+" "+h.File+":"+strconv.Itoa(h.Line))
	}
	if len(checked) == 0 {
		t.Errorf("no hotspot with %.0f%% of own time to compare with go tool pprof -lines", minFlat)
	}
	return checked
}

func rowsOf(rows []pprofRow, fn string) []pprofRow {
	var out []pprofRow
	for _, r := range rows {
		if r.fn == fn {
			out = append(out, r)
		}
	}
	return out
}
