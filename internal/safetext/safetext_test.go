package safetext

import "testing"

func TestEscapes(t *testing.T) {
	for _, c := range []struct{ name, in, line, log string }{
		{"plain text is unchanged", "speedup 1.2x (ok) é", "speedup 1.2x (ok) é", "speedup 1.2x (ok) é"},
		{"cursor up and erase line", "FAIL\x1b[1A\x1b[2Kaccepted", `FAIL\x1b[1A\x1b[2Kaccepted`, `FAIL\x1b[1A\x1b[2Kaccepted`},
		{"conceal", "\x1b[8msecret\x1b[0m", `\x1b[8msecret\x1b[0m`, `\x1b[8msecret\x1b[0m`},
		{"carriage return overwrites", "rejected\raccepted", `rejected\x0daccepted`, `rejected\x0daccepted`},
		{"tab and newline kept in logs", "a\tb\nc", `a\x09b\x0ac`, "a\tb\nc"},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1 CSI as a character", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"C1 CSI as a raw byte", "a\x9b2Jb", `a\x9b2Jb`, `a\x9b2Jb`},
		{"bell and backspace", "\a\b", `\x07\x08`, `\x07\x08`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.in); got != c.line {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
			}
			if got := Log(c.in); got != c.log {
				t.Errorf("Log(%q) = %q, want %q", c.in, got, c.log)
			}
			if Log(Log(c.in)) != Log(c.in) {
				t.Errorf("Log(%q) escapes again", c.in)
			}
		})
	}
}

// Nothing escape writes may itself be a control character, whatever the
// input.
func FuzzEscapeLeavesNoControlByte(f *testing.F) {
	f.Add("\x1b[2J\x9b\u009b\r\n\t\x7f")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Log(s)} {
			for i := 0; i < len(out); i++ {
				c := out[i]
				if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
					t.Fatalf("%q -> %q holds %#x", s, out, c)
				}
			}
			if Log(out) != out {
				t.Fatalf("%q -> %q escapes again", s, out)
			}
		}
	})
}

func TestStringsEscapesARecordWhole(t *testing.T) {
	type run struct{ Tail string }
	type rec struct {
		Summary string
		Gates   []run
		Side    *run
		Env     map[string]string
		Runs    map[string]run
		Count   int
	}
	r := &rec{Summary: "a\x1b[1Ab", Gates: []run{{"x\x9by"}}, Side: &run{"\x1b[8m"}, Env: map[string]string{"k": "\x07"}, Runs: map[string]run{"r": {"\x7f"}}, Count: 3}
	Strings(r)
	if r.Summary != `a\x1b[1Ab` || r.Gates[0].Tail != `x\x9by` || r.Side.Tail != `\x1b[8m` || r.Env["k"] != `\x07` || r.Runs["r"].Tail != `\x7f` || r.Count != 3 {
		t.Fatalf("%+v %+v", r, *r.Side)
	}
}
