package verdict

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// A gate whose failing assertion comes 250 KB into its output, with 150 KB
// more after it: the summary quotes the assertion, not "exit status 1" or
// the last kilobyte, and the stored log holds every byte.
func TestFailingAssertionDeepInALongLogIsFoundAndKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	ctx := context.Background()
	f.repin(f.patch(map[string]func(string) string{"test.sh": func(string) string {
		return `#!/bin/sh
i=0
while [ $i -lt 5000 ]; do echo "check $i: walk(3) is deterministic ............"; i=$((i+1)); done
q="'"
"$HONE_OUT/prog" --selftest || echo "selftest.c:12: main: Assertion \` + "`" + `walk(3) == walk(3)$q failed."
i=0
while [ $i -lt 3000 ]; do echo "cleanup $i ............................................."; i=$((i+1)); done
exec "$HONE_OUT/prog" --selftest
`
	}}))
	broken := f.patch(map[string]func(string) string{"prog.c": replace("return walk(3) == walk(3) ? 0 : 1;", "return 1;")})
	f.propose(broken, "6b6b6b6b6b6b6b6b", "skip the self-test")
	e, err := Run(ctx, f.ws, "6b6b6b6b6b6b6b6b", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	const assertion = "selftest.c:12: main: Assertion `walk(3) == walk(3)' failed."
	if want := "gate unit failed: " + assertion + " (exit status 1)"; e.Summary != want {
		t.Errorf("summary %q, want %q", e.Summary, want)
	}
	if e.Logs != LogsAttachment {
		t.Fatalf("logs %q", e.Logs)
	}
	sh, err := Show(ctx, f.ws, "6b6b6b6b", "unit")
	if err != nil {
		t.Fatal(err)
	}
	if sh.Entry.ID != e.ID {
		t.Errorf("the patch's prefix shows verdict %s, want %s", sh.Entry.ID, e.ID)
	}
	out, err := sh.File("candidate.stdout")
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(out.Data, []byte(assertion))
	if out.Cut || at < 240<<10 || len(out.Data) < 400<<10 || !bytes.HasSuffix(out.Data, []byte("cleanup 2999 .............................................\n")) {
		t.Errorf("stored stdout: %d bytes, cut %v, assertion at %d", len(out.Data), out.Cut, at)
	}
	var text strings.Builder
	if err := WriteShowText(&text, sh); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "--- unit/candidate.stdout (") || !strings.Contains(text.String(), assertion) {
		t.Errorf("hone verdict show --gate unit lacks the log:\n%.2000s", text.String())
	}
}

func TestFailureLine(t *testing.T) {
	tests := []struct {
		name           string
		stdout, stderr string
		want           string
	}{
		{"assert(3)", "ok 1\nok 2\n", "prog: t.c:9: main: Assertion `x == 3' failed.\nAborted\n", "prog: t.c:9: main: Assertion `x == 3' failed."},
		{"go test", "=== RUN   TestX\n    x_test.go:12: got 3\n--- FAIL: TestX (0.00s)\nFAIL\n", "", "--- FAIL: TestX (0.00s)"},
		{"stderr before stdout", "FAIL: summary\n", "t.c:3:5: error: expected ';'\n", "t.c:3:5: error: expected ';'"},
		{"gtest", "[ RUN      ] A.B\n[  FAILED  ] A.B (0 ms)\n", "", "[  FAILED  ] A.B (0 ms)"},
		{"python", "", "Traceback (most recent call last):\n  File \"t.py\"\nAssertionError: 2 != 3\n", "Traceback (most recent call last):"},
		{"rust", "", "thread 'main' panicked at src/main.rs:2:5:\n", "thread 'main' panicked at src/main.rs:2:5:"},
		{"tap", "ok 1 - a\nnot ok 2 - b\n", "", "not ok 2 - b"},
		{"no pattern: the tail", "step 1\nstep 2\n\n", "", "step 2"},
		{"no pattern, stderr wins", "out\n", "last words\n", "last words"},
		{"nothing", "", "", ""},
		{"passed counts are not failures", "100% tests passed, 0 tests failed out of 18\n", "", "100% tests passed, 0 tests failed out of 18"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failureLine([]byte(tt.stdout), []byte(tt.stderr)); got != tt.want {
				t.Errorf("failureLine = %q, want %q", got, tt.want)
			}
		})
	}
}

// A stream longer than [ledger] gate_log_size keeps its start and its
// end, with the cut marked, in the stored archive as in the entry.
func TestLongLogIsCutToTheCapWithTheCutMarked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", "[ledger]\ngate_log_size = \"64KiB\"\n"+cToml)
	f.repin(f.patch(map[string]func(string) string{"test.sh": func(string) string {
		return "#!/bin/sh\ni=0\nwhile [ $i -lt 8000 ]; do echo \"line $i ........................................\"; i=$((i+1)); done\necho 'FAIL: the end' >&2\nexit 1\n"
	}}))
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 3")}), Options{})
	f.want(e, ledger.VerdictError, ReasonBaseline)
	att, err := e.logs.attachments()
	if err != nil || len(att) != 1 {
		t.Fatalf("attachments %v, %v", att, err)
	}
	files, err := readLogs(att[0].Data, "unit")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, lf := range files {
		names = append(names, lf.Name)
		if lf.Name != "candidate.stdout" {
			continue
		}
		if !lf.Cut || len(lf.Data) > 64<<10+9<<10 || !bytes.HasPrefix(lf.Data, []byte("line 0 ")) ||
			!bytes.HasSuffix(lf.Data, []byte("line 7999 ........................................\n")) || !bytes.Contains(lf.Data, []byte(" bytes cut here; the stream was ")) {
			t.Errorf("candidate.stdout: cut %v, %d bytes:\n%.300s", lf.Cut, len(lf.Data), lf.Data)
		}
	}
	if strings.Join(names, ",") != "candidate.stdout,candidate.stderr,baseline.stdout,baseline.stderr" {
		t.Errorf("stored files of the gate: %v", names)
	}
	if !strings.Contains(e.Detail, "FAIL: the end (exit status 1)") {
		t.Errorf("detail %q", e.Detail)
	}
}
