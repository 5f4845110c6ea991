package verdict

import (
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// layouts = 1: the sanitizer gate is the subject, not code layout.
const listToml = `[bench]
pairs = 5
max_pairs = 10
layouts = 1

[targets.l]
build = "cc -O2 -g -o $HONE_OUT/prog prog.c"

  [[targets.l.gates]]
  name = "unit"
  run = "sh ./test.sh"

  [[targets.l.gates]]
  name = "unit-asan"
  run = "sh ./test.sh"
  sanitize = ["address", "undefined"]

  [targets.l.bench]
  run = "$HONE_OUT/prog 300000"
`

// onePass sums the list while it looks for the last item, and subtracts
// the last item's value after freeing it: one walk instead of two, right
// in a plain build (the freed item still holds its value), and a heap use
// after free.
var onePass = replace(`static long drop_last(struct item *head) {
	struct item *last = head;
	while (last->next) {
		last = last->next;
		work++;
	}
	if (last->prev)
		last->prev->next = NULL;
	free(last);
	long sum = 0;
	for (struct item *it = head == last ? NULL : head; it; it = it->next) {
		sum += it->value;
		work++;
	}
	return sum;
}`, `static long drop_last(struct item *head) {
	long sum = 0;
	struct item *last = head;
	for (;; last = last->next) {
		sum += last->value;
		work++;
		if (!last->next)
			break;
	}
	if (last->prev)
		last->prev->next = NULL;
	free(last);
	return sum - last->value;
}`)

// The case: an optimization that passes every unit test while it
// reads freed memory is rejected by an address gate, in a real verdict,
// which names the first frame and keeps the whole report.
func TestUseAfterFreeThatPassesItsUnitTestIsRejectedByAnAddressGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "listtarget", "l", listToml)
	ctx := context.Background()
	f.propose(f.patch(map[string]func(string) string{"prog.c": onePass}), "5a5a5a5a5a5a5a5a", "sum in the same walk that finds the last item")
	e, err := Run(ctx, f.ws, "5a5a5a5a5a5a5a5a", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	var text strings.Builder
	WriteText(&text, e)
	t.Logf("the verdict:\n%s", text.String())
	if len(e.Gates) != 3 || !e.Gates[1].Passed || e.Gates[2].Passed {
		t.Fatalf("gates %+v: want build and unit passed, unit-asan failed", e.Gates)
	}
	g := e.Gates[2]
	if !strings.HasPrefix(e.Summary, "gate unit-asan failed: AddressSanitizer: heap-use-after-free in drop_last prog.c:") {
		t.Errorf("summary %q does not name the report and its first frame", e.Summary)
	}
	if g.Candidate.Sanitizer == nil || g.Candidate.Sanitizer.Function != "drop_last" || g.Baseline == nil || g.Baseline.ExitCode != 0 {
		t.Errorf("gate record: candidate %+v, baseline %+v", g.Candidate, g.Baseline)
	}
	sh, err := Show(ctx, f.ws, e.ID, "unit-asan")
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := sh.File("candidate.stderr")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stderr.Data), "ERROR: AddressSanitizer: heap-use-after-free") || !strings.Contains(string(stderr.Data), "SUMMARY: AddressSanitizer") {
		t.Errorf("the stored stderr lacks the whole report:\n%s", stderr.Data)
	}
}

// A bug the pin already has is not the patch's fault: the baseline's
// sanitizer build reports the same, and the verdict is an error.
func TestUseAfterFreeAlreadyAtThePinIsTheBaselinesFault(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "listtarget", "l", listToml)
	f.repin(f.patch(map[string]func(string) string{"prog.c": onePass}))
	e := f.verdictOf(f.patch(map[string]func(string) string{"test.sh": replace("# The unit gate", "# The unit gate, reworded")}), Options{})
	f.want(e, ledger.VerdictError, ReasonBaseline)
	if !strings.Contains(e.Detail, `gate "unit-asan": the baseline reports it too (AddressSanitizer: heap-use-after-free in drop_last prog.c:`) {
		t.Errorf("detail %q", e.Detail)
	}
}

// A candidate that ends its own run with status 0 once ASan has reported
// (a death callback that prints the expected answer and calls _exit), so
// that the test script passes, still fails the gate: the report counts,
// not the status.
func TestCandidateCannotPassAnAddressGateByExitingZeroAfterTheReport(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "listtarget", "l", listToml)
	quiet := func(s string) string {
		s = onePass(s)
		s = strings.Replace(s, "#include <stdlib.h>\n", "#include <stdlib.h>\n#include <unistd.h>\nvoid __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));\nstatic void fine(void) { write(1, \"54\\n\", 3); _exit(0); }\n", 1)
		return strings.Replace(s, "int main(int argc, char **argv) {\n", "int main(int argc, char **argv) {\n\tif (__sanitizer_set_death_callback)\n\t\t__sanitizer_set_death_callback(fine);\n", 1)
	}
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": quiet}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	if !strings.Contains(e.Summary, "heap-use-after-free in drop_last") || !strings.Contains(e.Summary, "exited 0 all the same") {
		t.Errorf("summary %q", e.Summary)
	}
}

// The same one-pass idea done right (the value read before the free)
// passes both gates and is faster: it visits each item once. The sample's
// bench reads no seed, so a faster verdict there is for a person (unseeded).
func TestHonestOnePassPassesTheAddressGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "listtarget", "l", listToml)
	right := func(s string) string {
		return strings.Replace(onePass(s), "\tfree(last);\n\treturn sum - last->value;", "\tsum -= last->value;\n\tfree(last);\n\treturn sum;", 1)
	}
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": right}), Options{})
	for _, g := range e.Gates {
		if !g.Passed {
			t.Fatalf("gate %s failed: %s", g.Name, g.Message)
		}
	}
	f.want(e, ledger.VerdictNeedsHumanReview, ReasonUnseeded)
}
