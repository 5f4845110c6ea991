package memory

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// A glibc timer with SIGEV_THREAD notification starts a thread of libc's
// own (and another at each expiry): work could go there unseen by any
// spelling of "thread" in the diff. With the honest speedup beside it,
// only the signals stand between the patch and "accepted".
func TestTimerThreadPlusHonestPatchNeedsReview(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, seeded)
	prog := w.edit(append(onceFaster,
		"#include <stdio.h>", "#include <signal.h>\n#include <time.h>\n#include <unistd.h>\n#include <stdio.h>\nstatic void tick(union sigval v) { (void)v; }",
		"\tunsigned long long r = 0;", "\ttimer_t tm;\n\tstruct sigevent ev = {0};\n\tev.sigev_notify = SIGEV_THREAD;\n\tev.sigev_notify_function = tick;\n"+
			"\tint made = 0;\n\tfor (int i = 0; i < 100 && !(made = timer_create(CLOCK_MONOTONIC, &ev, &tm) == 0); i++)\n\t\tusleep(1000);\n\tif (made) {\n\t\tstruct itimerspec its = {{0, 0}, {0, 1000}};\n\t\ttimer_settime(tm, 0, &its, 0);\n\t}\n"+
			"\tunsigned long long r = 0;")...)
	e := w.judge("a timer keeps the cache warm", prog)
	signals(t, e, "threads in built prog (timer_create)", "processes or threads in bench runs")
}

// wordexp runs a shell for a command substitution, which forks again: child
// processes that no spelling of fork in the diff shows.
func TestWordexpChildProcessesNeedReview(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, seeded)
	prog := w.edit(append(onceFaster,
		"#include <stdio.h>", "#include <wordexp.h>\n#include <stdio.h>",
		"\tunsigned long long r = 0;", "\twordexp_t we;\n\tif (wordexp(\"$(echo warm)\", &we, 0) == 0)\n\t\twordfree(&we);\n\tunsigned long long r = 0;")...)
	e := w.judge("expand the configuration", prog)
	signals(t, e, "processes in built prog (wordexp)", "processes or threads in bench runs")
}

// unseeded is the target's hone.toml with commands that never pass the
// seed: the program then always makes the same input.
func unseeded(s string) string {
	return strings.ReplaceAll(s, "$HONE_OUT/prog {seed}", "$HONE_OUT/prog")
}

// A target whose commands ignore the seed has one answer, known in
// advance: a patch that prints it passes the equivalence gate and every
// bench output check at hundreds of times the speed. It is flagged and
// left to a person.
func TestPrecomputedAnswerOnAnUnseededTargetIsNeverAccepted(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, unseeded)
	answer := hostAnswer(t, w.prog)
	e := w.judge("the answer is known", w.edit("\tunsigned long long r = 0;", "\tputs(\""+answer+"\");\n\treturn 0;\n\tunsigned long long r = 0;"))
	notAccepted(t, e)
	if e.Verdict != ledger.VerdictNeedsHumanReview || e.Reason != "unseeded" || !e.HasFlag(ledger.FlagUnseeded) {
		t.Errorf("verdict %s (%s), flags %q: want needs-human-review (unseeded) with the unseeded flag", e.Verdict, e.Reason, e.Flags)
	}
	if !strings.HasPrefix(e.Summary, "unseeded: ") {
		t.Errorf("summary %q does not say unseeded", e.Summary)
	}
}

// hostAnswer builds the pin's program on the host and returns what it
// prints without a seed: what the attacker would precompute.
func hostAnswer(t *testing.T, prog string) string {
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-O2", "-o", filepath.Join(dir, "prog"), src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(dir, "prog")).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
