package verdict

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testgit"
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
	att, note, err := e.logs.attachments("cut")
	if err != nil || len(att) != 1 || note != "" {
		t.Fatalf("attachments %v, %q, %v", att, note, err)
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

// noisySelftest makes the unit gate print 5 MiB of random bytes, which gzip
// cannot shrink, on each stream, and fail.
const noisySelftest = `static int selftest(void) {
	static unsigned char buf[1 << 16];
	unsigned long long x = 88172645463325252ULL;
	for (int s = 0; s < 2; s++) {
		for (int n = 0; n < 80; n++) {
			for (size_t i = 0; i < sizeof buf; i++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				buf[i] = (unsigned char)(x >> 24);
			}
			fwrite(buf, 1, sizeof buf, s ? stderr : stdout);
		}
	}
	return 1;
}
static int unused_selftest(void) {`

// A candidate whose gate prints 5 MiB of random bytes on each stream adds
// to the shared ledger (branch and notes) at most [ledger]
// verdict_log_size and a few kilobytes of entries, trees and commits; the
// machine that judged keeps the logs whole, and the verdict's detail says
// where.
func TestRandomGateOutputCannotBloatTheLedger(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", strings.Replace(cToml, `timeout = "2s"`, `timeout = "10m"`, 1))
	ctx := context.Background()
	noisy := f.patch(map[string]func(string) string{"prog.c": replace("static int selftest(void) {", noisySelftest)})
	f.propose(noisy, "5a5a5a5a5a5a5a5a", "print noise")
	before := testgit.Git(t, f.ws.Root, "rev-parse", "refs/heads/hone/ledger")
	e, err := Run(ctx, f.ws, "5a5a5a5a5a5a5a5a", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	const limit, slack = 1 << 20, 32 << 10
	grew := objectBytes(t, f.ws.Root, "refs/heads/hone/ledger", "refs/notes/hone", "--not", before)
	t.Logf("the verdict grew the ledger by %d bytes", grew)
	if grew > limit+slack {
		t.Errorf("the verdict grew the ledger by %d bytes; [ledger] verdict_log_size is %d", grew, limit)
	}
	whole := filepath.Join(f.ws.StatePath(WholeLogsDir), e.Started+"."+LogsAttachment)
	if fi, err := os.Stat(whole); err != nil || fi.Size() <= limit {
		t.Errorf("the judging machine keeps no whole logs at %s: %v", whole, err)
	}
	if !strings.Contains(e.Detail, "verdict_log_size") || !strings.Contains(e.Detail, ".git/hone/logs/"+e.Started+"."+LogsAttachment) {
		t.Errorf("the detail does not say where the whole logs are: %.300q", e.Detail)
	}
	sh, err := Show(ctx, f.ws, e.ID, "unit")
	if err != nil {
		t.Fatal(err)
	}
	out, err := sh.File("candidate.stdout")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Cut || !bytes.Contains(out.Data, []byte("[ledger] verdict_log_size keeps")) {
		t.Errorf("stored stdout: %d bytes, cut %v", len(out.Data), out.Cut)
	}
}

// objectBytes sums the sizes of the objects git rev-list --objects args
// lists.
func objectBytes(t *testing.T, dir string, args ...string) int {
	t.Helper()
	list := testgit.Git(t, dir, append([]string{"rev-list", "--objects"}, args...)...)
	var ids []string
	for _, line := range strings.Split(list, "\n") {
		if id, _, _ := strings.Cut(line, " "); id != "" {
			ids = append(ids, id)
		}
	}
	sizes := testgit.Cmd{Dir: dir, Stdin: strings.Join(ids, "\n") + "\n"}.Git(t, "cat-file", "--batch-check=%(objectsize)")
	total := 0
	for _, f := range strings.Fields(sizes) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// However many gates print random bytes, the stored archive weighs at most
// the bound, every stream keeps its start and its end around a marked cut,
// and the whole archive is kept where the note says.
func TestStoredLogsFitTheVerdictBound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	keep := t.TempDir()
	l := newGateLogs(4<<20).storedWithin(64<<10, keep)
	for g := range 12 {
		l.addFile(fmt.Sprintf("gate%d", g), "candidate.stdout", noise(256<<10))
	}
	l.addFile("small", "candidate.stderr", []byte("FAIL: short\n"))
	att, note, err := l.attachments("started")
	if err != nil || len(att) != 1 {
		t.Fatalf("attachments %v, %q, %v", att, note, err)
	}
	if len(att[0].Data) > 64<<10 {
		t.Errorf("the stored archive weighs %d bytes, over the bound of %d", len(att[0].Data), 64<<10)
	}
	if whole, err := os.ReadFile(filepath.Join(keep, "started."+LogsAttachment)); err != nil || len(whole) < 12*256<<10 || !strings.Contains(note, "started."+LogsAttachment) {
		t.Errorf("the whole archive (%d bytes, %v) is not kept where the note says: %q", len(whole), err, note)
	}
	files, err := readLogs(att[0].Data, "")
	if err != nil || len(files) != 13 {
		t.Fatalf("stored files %d, %v", len(files), err)
	}
	for _, f := range files[:12] {
		if !f.Cut || !bytes.Contains(f.Data, []byte("[ledger] verdict_log_size keeps")) {
			t.Errorf("%s/%s: cut %v, %d bytes, no mark", f.Gate, f.Name, f.Cut, len(f.Data))
		}
	}
	if f := files[12]; f.Cut || string(f.Data) != "FAIL: short\n" {
		t.Errorf("a stream shorter than its share was cut: %q", f.Data)
	}
}

// The machine's whole logs keep to a bound, newest first, so a flood of
// noisy candidates cannot fill a runner's disk; the newest archive stays
// whatever its size, and files that are not archives are left alone.
func TestWholeLogsKeepTheNewestWithinTheirBound(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	write := func(name string, size int, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	write("old."+LogsAttachment, 40, 3*time.Hour)
	write("mid."+LogsAttachment, 40, 2*time.Hour)
	write("new."+LogsAttachment, 40, time.Hour)
	write("notes.txt", 1000, 4*time.Hour)
	trimWholeLogs(dir, 100)
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{"mid." + LogsAttachment, "new." + LogsAttachment, "notes.txt"}; !slices.Equal(left, want) {
		t.Errorf("left %q; want %q", left, want)
	}
	write("huge."+LogsAttachment, 500, 0)
	trimWholeLogs(dir, 100)
	if _, err := os.Stat(filepath.Join(dir, "huge."+LogsAttachment)); err != nil {
		t.Errorf("the newest archive, over the bound alone, was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new."+LogsAttachment)); err == nil {
		t.Errorf("an older archive was kept past the bound")
	}
}
