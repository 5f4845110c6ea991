package testbed

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// The gaming suites (e2e/gaming, e2e/gaming/rules): an optimizer rewarded
// only by "accepted" tries to look faster without being faster, or to
// escape its rules. Every case is a real patch proposed with `hone patch
// propose` and judged by `hone verdict` (the hone binary, as a separate
// process) on a target whose gates and bench take the verdict's input
// seed; none may be accepted, and each checks why. The honest patches that
// do less work are still accepted. The cases are two packages so that each
// stays inside go test's time limit on a slow machine.

// OpenGaming makes the gaming suites' workspace, with four layouts, the
// default: a game that is fast only where it is counted is, in time, a
// layout-only change, which one layout let through at 3.20x under two
// hogs.
func OpenGaming(t *testing.T) *Arena {
	if os.Geteuid() != 0 {
		t.Skip("the gaming suites run hone as root, where the jail has a cgroup")
	}
	return Open(t, 0, "gaming", func(a *Arena) map[string]string {
		return map[string]string{
			"hone.toml":          strings.ReplaceAll(a.File("hone.toml"), "@RODIR@", a.RO),
			"targets/c/prog.c":   a.File("prog.c"),
			"targets/c/Makefile": a.File("Makefile"),
			"targets/c/test.sh":  a.File("test.sh"),
		}
	})
}

// Game is one case of a gaming suite.
type Game struct {
	Name string
	Run  func(t *testing.T, a *Arena)
}

// RunGames runs games in shards, each in an arena of its own and the
// shards side by side (t.Parallel), so that one shard's builds and gates
// overlap another's (benches still take the machine's turn one at a time).
// A case checks the host through its own arena, whose repository, HOME, tag
// and ledger no other shard touches; within a shard the cases run in order.
func RunGames(t *testing.T, games []Game) {
	const shards = 4
	for s := range shards {
		t.Run(strconv.Itoa(s), func(t *testing.T) {
			t.Parallel()
			a := OpenGaming(t)
			for i := s; i < len(games); i += shards {
				g := games[i]
				if !t.Run(g.Name, func(t *testing.T) { a.T = t; g.Run(t, a) }) {
					a.T = t
				}
			}
		})
	}
}

// GamingMakefile is the gaming target's Makefile with its recipe replaced.
func GamingMakefile(recipe ...string) string {
	return "$(OUT)/prog: prog.c\n\t" + strings.Join(recipe, "\n\t") + "\n"
}

// OnceFaster is the honest patch: one walk instead of four.
const OnceFaster = "#define REPS 1"

// Fast wraps a disguise around the honest speedup, so that only the
// defence stands between the patch and "accepted".
func (a *Arena) Fast(pairs ...string) map[string]string {
	return a.Prog(append([]string{"#define REPS 4", OnceFaster}, pairs...)...)
}

// Skip is a program that, when cond holds, prints a fast answer (0) in
// place of doing the work: what a patch that thinks it can tell a bench
// run from a gate would do.
func (a *Arena) Skip(includes, cond string) map[string]string {
	return a.Prog(
		"#include <string.h>", "#include <string.h>\n"+includes,
		"\tunsigned long long r = 0;", "\tif ("+cond+") {\n\t\tputs(\"0\");\n\t\treturn 0;\n\t}\n\tunsigned long long r = 0;")
}

// WalkOnceWhen is a program that, when cond holds, walks once where it
// walked REPS times: the same answer for a quarter of the work. It is what
// a patch that can tell hone's runs from the program's real ones would
// do: with cond true in the bench alone, or in the gates and the bench
// alike, every output is right and the speedup a lie that no output check
// catches (Skip's wrong answer would be).
func (a *Arena) WalkOnceWhen(includes, cond string) map[string]string {
	return a.Prog(
		"#include <string.h>", "#include <string.h>\n"+includes,
		"\tfor (int k = 0; k < REPS; k++)", "\tint reps = ("+cond+") ? 1 : REPS;\n\tfor (int k = 0; k < reps; k++)")
}

// Answers are the program's outputs at the pin for seeds 0..n-1 (n = 0:
// seed 0 alone), as an optimizer could compute them ahead of time.
func (a *Arena) Answers(n int) []string {
	a.T.Helper()
	exe := filepath.Join(a.Tmp, "pin-prog")
	src := filepath.Join(a.Tmp, "pin-prog.c")
	os.WriteFile(src, []byte(a.File("prog.c")), 0o644)
	defer os.Remove(src)
	defer os.Remove(exe)
	if out, err := exec.Command("cc", "-O2", "-o", exe, src).CombinedOutput(); err != nil {
		a.T.Fatalf("cc: %v %s", err, out)
	}
	var out []string
	for i := range max(n, 1) {
		b, err := exec.Command(exe, strconv.Itoa(i)).Output()
		if err != nil {
			a.T.Fatal(err)
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	return out
}

// NotAccepted checks that e is not accepted and is one of words.
func NotAccepted(t *testing.T, e *verdict.Entry, words ...string) {
	t.Helper()
	if e.Verdict == ledger.VerdictAccepted {
		t.Fatalf("accepted at %.2fx: %s", e.Speedup, e.Detail)
	}
	WantVerdict(t, e, words...)
}

// GateFailed checks that the gate that failed is name, with msg in its
// message.
func GateFailed(t *testing.T, e *verdict.Entry, name, msg string) {
	t.Helper()
	NotAccepted(t, e, ledger.VerdictRejectedGate)
	if g := e.Gates[len(e.Gates)-1]; g.Name != name || !strings.Contains(g.Message, msg) {
		t.Errorf("failed gate %s: %q; want %s: %q", g.Name, g.Message, name, msg)
	}
}

// Risky checks that e needs a person for a risk signal containing signal.
func Risky(t *testing.T, e *verdict.Entry, signal string) {
	t.Helper()
	NotAccepted(t, e, ledger.VerdictNeedsHumanReview)
	for _, s := range e.RiskSignals {
		if strings.Contains(s, signal) {
			return
		}
	}
	t.Errorf("risk signals %q lack %q", e.RiskSignals, signal)
}
