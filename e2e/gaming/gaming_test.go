package gaming

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// The gaming suite: an optimizer rewarded only by "accepted" tries to look
// faster without being faster, or to escape its rules. Every case is a
// real patch proposed with `hone patch propose` and judged by `hone verdict`
// (the hone binary, as a separate process) on a target whose gates and
// bench take the verdict's input seed; none may be accepted, and each
// checks why. The honest patches that do less work are still accepted.

func newGamingArena(t *testing.T) *arena {
	if os.Geteuid() != 0 {
		t.Skip("the gaming suite runs hone as root, where the jail has a cgroup")
	}
	return &arena{testbed.Open(t, 0, "gaming", func(a *testbed.Arena) map[string]string {
		toml := strings.ReplaceAll(a.File("hone.toml"), "@RODIR@", a.RO)
		// The real meter gets four layouts, the default: a game that is
		// fast only where it is counted is, in time, a layout-only change,
		// which one layout let through at 3.20x under two hogs. Declared
		// work does not depend on where the code lands.
		if !tier.Measuring() {
			toml = testbed.OneLayout(t, toml)
		}
		return map[string]string{
			"hone.toml":          toml,
			"targets/c/prog.c":   a.File("prog.c"),
			"targets/c/Makefile": a.File("Makefile"),
			"targets/c/test.sh":  a.File("test.sh"),
		}
	})}
}

// makefile is the target's Makefile with its recipe replaced.
func makefile(recipe ...string) string {
	return "$(OUT)/prog: prog.c\n\t" + strings.Join(recipe, "\n\t") + "\n"
}

// skip is a program that, when cond holds, prints a fast answer (0) in
// place of doing the work: what a patch that thinks it can tell a bench
// run from a gate would do.
func (a *arena) skip(includes, cond string) map[string]string {
	return a.Prog(
		"#include <string.h>", "#include <string.h>\n"+includes,
		"\tunsigned long long r = 0;", "\tif ("+cond+") {\n\t\tputs(\"0\");\n\t\treturn 0;\n\t}\n\tunsigned long long r = 0;")
}

// walkOnceWhen is a program that, when cond holds, walks once where it
// walked REPS times: the same answer for a quarter of the work. It is what
// a patch that can tell hone's runs from the program's real ones would
// do: with cond true in the bench alone, or in the gates and the bench
// alike, every output is right and the speedup a lie that no output check
// catches (skip's wrong answer would be).
func (a *arena) walkOnceWhen(includes, cond string) map[string]string {
	return a.Prog(
		"#include <string.h>", "#include <string.h>\n"+includes,
		"\tfor (int k = 0; k < REPS; k++)", "\tint reps = ("+cond+") ? 1 : REPS;\n\tfor (int k = 0; k < reps; k++)")
}

// reapedChild is a program whose child does twice the pin's walks, and
// declares them, while the parent waits for its answer on a pipe and
// then until the kernel has reaped the child (SIGCHLD ignored), so that
// no process is left and no one waited for the child: a meter that
// charged only waited-for processes would see the parent's few
// microseconds, not the child's work.
func (a *arena) reapedChild() map[string]string {
	return a.Prog(
		"#include <string.h>", "#include <string.h>\n#include <sched.h>\n#include <signal.h>\n#include <unistd.h>",
		"\tunsigned long long r = 0;\n\tfor (int k = 0; k < REPS; k++)\n\t\tr = walk(steps);",
		"\tunsigned long long r = 0;\n\tint p[2];\n\tif (pipe(p) != 0) return 1;\n\tsignal(SIGCHLD, SIG_IGN);\n"+
			"\tpid_t child = fork();\n\tif (child == 0) {\n\t\tfor (int k = 0; k < 2 * REPS; k++)\n\t\t\tr = walk(steps);\n"+
			"\t\tfprintf(stderr, \"hone-work: %llu\\n\", work);\n\t\tif (write(p[1], &r, sizeof r) != sizeof r) _exit(1);\n\t\t_exit(0);\n\t}\n"+
			"\tif (read(p[0], &r, sizeof r) != sizeof r) return 1;\n"+
			"\twhile (kill(child, 0) == 0) sched_yield();")
}

// judgeTarget proposes files for target (c or ci) and judges the patch.
func (a *arena) judgeTarget(target, hypothesis string, files map[string]string) (*verdict.Entry, string) {
	a.T.Helper()
	before, known := a.Snapshot(), a.LedgerEntries()
	id := a.proposeTo(target, hypothesis, a.Diff(files))
	e, raw := a.Verdict(id)
	a.Unchanged(before, known, id, raw)
	return e, raw
}

func (a *arena) proposeTo(target, hypothesis, diff string) string {
	a.T.Helper()
	file := filepath.Join(a.Tmp, "patch.diff")
	a.WriteAs(file, diff)
	out := a.MustHone("patch", "propose", target, "--hotspot", "walk", "--class", "1", "--hypothesis", hypothesis, "--file", file, "--json")
	var p struct {
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.PatchID == "" {
		a.T.Fatalf("propose: %v\n%s", err, out)
	}
	return p.PatchID
}

func notAccepted(t *testing.T, e *verdict.Entry, words ...string) {
	t.Helper()
	if e.Verdict == ledger.VerdictAccepted {
		t.Fatalf("accepted at %.2fx: %s", e.Speedup, e.Detail)
	}
	testbed.WantVerdict(t, e, words...)
}

// gateFailed checks that the gate that failed is name, with msg in its
// message.
func gateFailed(t *testing.T, e *verdict.Entry, name, msg string) {
	t.Helper()
	notAccepted(t, e, ledger.VerdictRejectedGate)
	if g := e.Gates[len(e.Gates)-1]; g.Name != name || !strings.Contains(g.Message, msg) {
		t.Errorf("failed gate %s: %q; want %s: %q", g.Name, g.Message, name, msg)
	}
}

func risky(t *testing.T, e *verdict.Entry, signal string) {
	t.Helper()
	notAccepted(t, e, ledger.VerdictNeedsHumanReview)
	for _, s := range e.RiskSignals {
		if strings.Contains(s, signal) {
			return
		}
	}
	t.Errorf("risk signals %q lack %q", e.RiskSignals, signal)
}

// onceFaster is the honest patch: one walk instead of four.
const onceFaster = "#define REPS 1"

type game struct {
	name string
	run  func(t *testing.T, a *arena)
}

// fast wraps a disguise around the honest speedup, so that only the
// defence stands between the patch and "accepted".
func (a *arena) fast(pairs ...string) map[string]string {
	return a.Prog(append([]string{"#define REPS 4", onceFaster}, pairs...)...)
}

func gamingCases() []game {
	cases := []game{
		{"an honest 4x faster patch is still accepted", func(t *testing.T, a *arena) {
			e, _ := a.Judge("one walk is enough", a.Prog("#define REPS 4", onceFaster))
			testbed.WantVerdict(t, e, ledger.VerdictAccepted)
			if e.InputSeed == 0 || len(e.Bench.Outputs) != e.Bench.Pairs || len(e.Bench.Setups) != e.Bench.Pairs {
				t.Errorf("seed %d, %d outputs and %d setups for %d pairs", e.InputSeed, len(e.Bench.Outputs), len(e.Bench.Setups), e.Bench.Pairs)
			}
		}},
		{"an honest patch counted in instructions is still accepted", func(t *testing.T, a *arena) {
			e, _ := a.judgeTarget("ci", "one walk is enough, counted", a.Prog("#define REPS 4", onceFaster))
			testbed.WantVerdict(t, e, ledger.VerdictAccepted)
			if e.Bench.Check == nil {
				t.Error("no cpu-time check")
			}
		}},
	}
	cases = append(cases,
		game{"a helper that outlives the run", func(t *testing.T, a *arena) {
			e, _ := a.Judge("leave a helper behind", a.fast(
				"#include <string.h>", "#include <string.h>\n#include <unistd.h>",
				"\tunsigned long long r = 0;", "\tif (fork() == 0) { setsid(); if (fork() == 0) { sleep(100); } _exit(0); }\n\tunsigned long long r = 0;"))
			// The golden gate's run is the first to leave it behind, and
			// the meter's scan misses no double fork (the listing that
			// once let it slip by, a parent exiting between two reads of
			// /proc, is internal/jail's TestDoubleForkedDaemonIsAlwaysFound).
			notAccepted(t, e, ledger.VerdictRejectedGate)
			if g := e.Gates[len(e.Gates)-1]; g.Name != "golden" || !strings.Contains(g.Message, "processes running after it exited") {
				t.Errorf("failed gate %s: %q; want golden: a process left running", g.Name, g.Message)
			}
		}},
		game{"a child the kernel reaps does the work", func(t *testing.T, a *arena) {
			// The meter's defence (the child's CPU charged to the run) is
			// the measurement tier's (TestMeasureReapedChildIsCharged);
			// here, what it rests on: the jail sees the CPU of a child
			// no one waited for.
			e, _ := a.Judge("a child does the work", a.reapedChild())
			// Twice the work, declared by the child: slower.
			notAccepted(t, e, ledger.VerdictRejectedBench)
			if !e.Environment.Cgroup {
				t.Fatal("no cgroup: the jail cannot see a reaped child's CPU")
			}
			if e.Bench == nil || e.Bench.CandidateUnreapedSeconds <= e.Bench.BaselineUnreapedSeconds {
				t.Errorf("the reaped child's CPU was not seen: %+v", e.Bench)
			}
		}},
		game{"skip the work in runs later than the gates", laterThanTheGates},
	)
	// Where the jail hides the fact (hidden), every run does the work and
	// the patch changes nothing; where it cannot (HOME is the jail's, the
	// parent and PID 1 its init, stdout a pipe), the faster patch looks at
	// how it runs, and that needs a person.
	for _, d := range []struct {
		what, includes, cond string
		hidden               bool
	}{
		{"when stdout is a pipe", "#include <sys/stat.h>", "({ struct stat st; fstat(1, &st) == 0 && S_ISFIFO(st.st_mode); })", false},
		{"when its parent is PID 1", "#include <unistd.h>", "getppid() == 1", false},
		{"when PID 1 is hone's meter", "", `({ char b[64] = {0}; FILE *f = fopen("/proc/1/cmdline", "r"); f && fread(b, 1, 63, f) > 0 && strstr(b, "hone-jail-init"); })`, false},
		{"by HOME", "", `getenv("HOME") && strcmp(getenv("HOME"), "/home/hone") == 0`, false},
		{"by a meter's mount", "", `({ char b[1 << 16] = {0}; FILE *f = fopen("/proc/self/mountinfo", "r"); f && fread(b, 1, sizeof b - 1, f) > 0 && strstr(b, "/hone/meter"); })`, true},
		// A bench run at a raised priority (nice) would take the cores
		// ahead of the machine's other work, and tell the program so.
		{"when its priority is raised", "#include <sys/resource.h>", "getpriority(PRIO_PROCESS, 0) < 0", true},
	} {
		cases = append(cases, game{"skip the work " + d.what, func(t *testing.T, a *arena) {
			e, _ := a.Judge("the bench looks different "+d.what, a.walkOnceWhen(d.includes, d.cond))
			if !d.hidden {
				risky(t, e, "environment in ")
				return
			}
			notAccepted(t, e, ledger.VerdictRejectedBench)
			testbed.EveryRunDidTheWork(t, e)
		}})
	}
	cases = append(cases,
		game{"print nothing", func(t *testing.T, a *arena) {
			e, _ := a.Judge("output is overrated", a.Prog("\tprintf(\"%llu\\n\", r);", "\t(void)r;"))
			gateFailed(t, e, "golden", "stdout differs")
		}},
		game{"print the answer to stderr", func(t *testing.T, a *arena) {
			e, _ := a.Judge("stderr is just as good", a.fast("\tprintf(\"%llu\\n\", r);", "\tfprintf(stderr, \"%llu\\n\", r);"))
			gateFailed(t, e, "golden", "stdout differs")
		}},
		game{"print the answer of the old fixed input", func(t *testing.T, a *arena) {
			answer := a.answers(0)[0]
			e, _ := a.Judge("the input never changes", a.Prog("\tunsigned long long r = 0;", "\tputs(\""+answer+"\");\n\treturn 0;\n\tunsigned long long r = 0;"))
			gateFailed(t, e, "golden", "stdout differs")
		}},
		game{"carry a table of precomputed answers", func(t *testing.T, a *arena) {
			var table []string
			for i, ans := range a.answers(16) {
				table = append(table, "\tif (argc > 1 && strtoull(argv[1], 0, 10) == "+strconv.Itoa(i)+"ULL) { puts(\""+ans+"\"); return 0; }")
			}
			e, _ := a.Judge("most inputs are known", a.Prog("\tunsigned long long seed = ", strings.Join(table, "\n")+"\n\tunsigned long long seed = "))
			notAccepted(t, e, ledger.VerdictRejectedBench)
			testbed.EveryRunDidTheWork(t, e)
			if e.InputSeed < 16 {
				t.Errorf("seed %d is one the table knows", e.InputSeed)
			}
		}},
		game{"bake the answer for the seed at build time", func(t *testing.T, a *arena) {
			files := a.Prog("\tunsigned long long r = 0;", "\tFILE *baked = fopen(\"/hone/out/answer\", \"r\");\n\tchar line[64];\n\tif (baked && fgets(line, sizeof line, baked)) { fputs(line, stdout); return 0; }\n\tunsigned long long r = 0;")
			files["Makefile"] = makefile("cc -O2 -g -o $(OUT)/prog prog.c", "$(OUT)/prog \"$$HONE_SEED\" > $(OUT)/answer")
			e, _ := a.Judge("the build knows the input", files)
			gateFailed(t, e, "golden", "stdout differs")
		}},
		// Ofast, asm and threads behind pasted names are verdict's
		// (risk_test.go), judged there with real builds: these are the
		// spellings only the whole program shows.
		game{"Ofast through _Pragma", func(t *testing.T, a *arena) {
			e, _ := a.Judge("no pragma here", a.fast("#define REPS 1", "#define REPS 1\n_Pragma(\"GCC optimize(\\\"Ofast\\\")\")"))
			risky(t, e, "fast-math in targets/c/prog.c (preprocessed)")
		}},
		game{"an optimize attribute behind a define", func(t *testing.T, a *arena) {
			e, _ := a.Judge("a hot function", a.fast(
				"#define REPS 1", "#define REPS 1\n#define HOT __attribute__((__optimize__(\"Ofast\")))",
				"__attribute__((noinline)) static", "HOT __attribute__((noinline)) static"))
			risky(t, e, "fast-math in targets/c/prog.c (preprocessed)")
		}},
		game{"Ofast spelled in the Makefile", func(t *testing.T, a *arena) {
			files := a.fast()
			files["Makefile"] = "SPEED = fast\n" + makefile("cc -O$(SPEED) -g -o $(OUT)/prog prog.c")
			e, _ := a.Judge("a build setting", files)
			risky(t, e, "fast-math in built prog")
		}},
		game{"a pragma behind an include cc -E cannot follow", func(t *testing.T, a *arena) {
			files := a.fast("#include <string.h>", "#include <string.h>\n#include DEP")
			files["lib/dep.h"] = "#define CAT(a, b) a##b\n#define OPT(s) CAT(_Prag, ma)(s)\n"
			files["prog.c"] = strings.Replace(files["prog.c"], "#define REPS 1", "#define REPS 1\nOPT(\"GCC optimize(\\\"Ofast\\\")\")", 1)
			files["Makefile"] = makefile("cc -O2 -g -Ilib -DDEP='\"dep.h\"' -o $(OUT)/prog prog.c")
			e, _ := a.Judge("a header of its own", files)
			risky(t, e, "unpreprocessed in targets/c/prog.c")
		}},
		game{"delete the gates in the working tree's hone.toml", uncommittedGates},
		game{"move the pin to an agent commit", agentPin},
		game{"judge the same patch again", rerollVerdict},
		game{"propose the same diff again under other words", rerollProposal},
		game{"shop for max-pairs, a threshold or a metric", shopProtocol},
		game{"cancel a verdict with SIGINT", func(t *testing.T, a *arena) { cancelVerdict(t, a, syscall.SIGINT, 6) }},
		game{"kill a verdict with SIGKILL", func(t *testing.T, a *arena) { cancelVerdict(t, a, syscall.SIGKILL, 7) }},
		game{"paraphrase and rename a judged patch", paraphrase},
	)
	return cases
}

// laterThanTheGates: a program that can tell a later run from an earlier
// one (by the clock, by the age of its build, by anything that changes)
// skips the work, with a wrong answer, only in the runs after the gates
// that compare outputs: the bench's own output check must catch it. The
// change here is a file of the read_only folder the test makes while the
// verdict is held in its unit gate, past the golden gate and short of the
// bench, so that no machine, however slow, sees it early or late.
func laterThanTheGates(t *testing.T, a *arena) {
	later := filepath.Join(a.RO, "later-"+a.Tag)
	defer os.Remove(later)
	files := a.skip("#include <unistd.h>", `access("`+later+`", F_OK) == 0`)
	release := a.Hold(files)
	defer release()
	before, known := a.Snapshot(), a.LedgerEntries()
	id := a.proposeTo("c", "the bench comes later", a.Diff(files))
	// Without --json, which would silence the progress the test waits on;
	// the entry is read from the ledger after.
	cmd, progress := startHeld(t, a, id)
	if err := os.WriteFile(later, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hone verdict: %v\n%s", err, progress)
	}
	os.Remove(later)
	e, raw := a.entryOf(id)
	a.Unchanged(before, known, id, raw)
	gateFailed(t, e, "bench", "bench output differs from the baseline's")
}

// entryOf is the verdict the ledger holds for patch id, and its JSON.
func (a *arena) entryOf(id string) (*verdict.Entry, string) {
	a.T.Helper()
	var es []struct{ ID, Kind string }
	if err := json.Unmarshal([]byte(a.MustHone("ledger", "list", "--all", "--patch", id, "--json")), &es); err != nil {
		a.T.Fatal(err)
	}
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Kind != "verdict" {
			continue
		}
		raw := a.MustHone("ledger", "show", es[i].ID, "--json")
		var shown struct{ Entry verdict.Entry }
		if err := json.Unmarshal([]byte(raw), &shown); err != nil {
			a.T.Fatalf("ledger show: %v\n%s", err, raw)
		}
		a.T.Logf("%s (%s): %s", shown.Entry.Verdict, shown.Entry.Reason, shown.Entry.Summary)
		return &shown.Entry, raw
	}
	a.T.Fatalf("no verdict in the ledger for %s: %+v", id, es)
	return nil, ""
}

// answers are the program's outputs at the pin for seeds 0..n-1 (n = 0:
// seed 0 alone), as an optimizer could compute them ahead of time.
func (a *arena) answers(n int) []string {
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

// uncommittedGates: the gates deleted from the working tree's hone.toml
// change nothing: the pin's golden gate still rejects a wrong answer, and
// the verdict warns.
func uncommittedGates(t *testing.T, a *arena) {
	toml := filepath.Join(a.Repo, "hone.toml")
	orig, _ := os.ReadFile(toml)
	var kept []string
	skipping := false
	for _, line := range strings.Split(string(orig), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "[[targets.c.gates]]") {
			skipping = true
		} else if strings.HasPrefix(strings.TrimSpace(line), "[") {
			skipping = false
		}
		if !skipping {
			kept = append(kept, line)
		}
	}
	diff := a.Diff(a.Prog("\tprintf(\"%llu\\n\", r);", "\tprintf(\"%llu\\n\", r + 1);"))
	a.WriteAs(toml, strings.Join(kept, "\n"))
	defer a.WriteAs(toml, string(orig))
	id := a.proposeTo("c", "off by one is close enough", diff)
	e, raw := a.Verdict(id)
	gateFailed(t, e, "golden", "stdout differs")
	if !strings.Contains(raw, `"code": "uncommitted_config"`) {
		t.Errorf("no warning about the working tree's hone.toml:\n%s", raw)
	}
}

// agentPin: an agent commits a hone.toml without gates on a branch of its
// own and points the working tree's pin at it: the protected tip does not
// accept that pin, so the proposal is refused (exit 3, stale-pin), naming
// the current pin, and no patch ref or entry is left behind.
func agentPin(t *testing.T, a *arena) {
	toml := filepath.Join(a.Repo, "hone.toml")
	orig, _ := os.ReadFile(toml)
	a.Git("switch", "-q", "-c", "agent/c/pin")
	a.WriteAs(toml, strings.Replace(string(orig), "name = \"unit\"\n  run = \"sh ./test.sh\"", "name = \"unit\"\n  run = \"true\"", 1))
	a.Git("commit", "-qam", "a faster unit gate")
	a.Git("switch", "-q", "main")
	defer a.Git("branch", "-qD", "agent/c/pin")
	diff := a.Diff(a.fast())
	a.WriteAs(toml, strings.Replace(string(orig), "[targets.c]\n", "[targets.c]\npin = \"agent/c/pin\"\n", 1))
	defer a.WriteAs(toml, string(orig))
	before := a.LedgerEntries()
	file := filepath.Join(a.Tmp, "patch.diff")
	a.WriteAs(file, diff)
	_, errOut, code := a.RunHone("patch", "propose", "c", "--hotspot", "walk", "--class", "1", "--hypothesis", "one walk, on my own pin", "--file", file)
	if code != 3 || !strings.Contains(errOut, "stale-pin") || !strings.Contains(errOut, "re-propose the patch at the current pin") {
		t.Errorf("a proposal at the agent's own pin: exit %d\n%s", code, errOut)
	}
	if after := a.LedgerEntries(); len(after) != len(before) {
		t.Errorf("the refused proposal left %d entries", len(after)-len(before))
	}
}

// rerollVerdict: a judged patch is not judged again without a person's
// reason, and the runner does not pick it up.
func rerollVerdict(t *testing.T, a *arena) {
	id := a.proposeTo("c", "three walks", a.Diff(a.Prog("#define REPS 4", "#define REPS 3")))
	first, _ := a.Verdict(id)
	for range 2 {
		_, stderr, code := a.RunHone("verdict", id)
		if code != 3 || !strings.Contains(stderr, first.ID) || !strings.Contains(stderr, "--rejudge") {
			t.Errorf("judging again: exit %d: %s", code, stderr)
		}
	}
	if out := a.MustHone("verdict", "--pending", "c"); !strings.Contains(out, "no pending proposals") {
		t.Errorf("the runner judged it again:\n%s", out)
	}
}

// rerollProposal: the judged diff proposed again under another hypothesis
// is refused as a duplicate, naming the verdict.
func rerollProposal(t *testing.T, a *arena) {
	diff := a.Diff(a.Prog("#define REPS 4", "#define REPS 2"))
	id := a.proposeTo("c", "two walks", diff)
	first, _ := a.Verdict(id)
	file := filepath.Join(a.Tmp, "again.diff")
	a.WriteAs(file, diff)
	_, stderr, code := a.RunHone("patch", "propose", "c", "--hotspot", "main", "--class", "3", "--hypothesis", "halve the walks, as a new idea", "--file", file)
	if code != 3 || !strings.Contains(stderr, "duplicate attempt") || !strings.Contains(stderr, first.ID) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// shopProtocol: a verdict cannot be made easier to pass, and a refused one
// records nothing.
func shopProtocol(t *testing.T, a *arena) {
	before := a.LedgerEntries()
	id := a.proposeTo("c", "five walks are fine", a.Diff(a.Prog("#define REPS 4", "#define REPS 5")))
	for _, args := range [][]string{{"--max-pairs", "2"}, {"--threshold", "0.001"}, {"--metric", "wall"}, {"--metric", "instructions"}} {
		_, stderr, code := a.RunHone(append([]string{"verdict", id}, args...)...)
		if code != 3 || !strings.Contains(stderr, "refused") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	after := a.LedgerEntries()
	if len(after) != len(before)+1 {
		t.Errorf("refused verdicts recorded something: %d entries, then %d", len(before), len(after))
	}
}

// cancelVerdict: a verdict interrupted (SIGINT) or killed (SIGKILL) in the
// middle still ends the attempt, as cancelled, and the patch is not judged
// again without a person's reason.
func cancelVerdict(t *testing.T, a *arena, sig syscall.Signal, reps int) {
	// Held in its unit gate, the verdict is started and short of a
	// decision when the signal comes, however quick the machine.
	files := a.Prog("#define REPS 4", "#define REPS "+strconv.Itoa(reps))
	defer a.Hold(files)()
	id := a.proposeTo("c", strconv.Itoa(reps)+" walks, cancelled "+sig.String(), a.Diff(files))
	cmd, _ := startHeld(t, a, id)
	if !strings.Contains(a.MustHone("ledger", "list", "--all", "--patch", id), " started ") {
		t.Fatal("no started entry")
	}
	cmd.Process.Signal(sig)
	if err := cmd.Wait(); err == nil {
		t.Fatal("the verdict finished before it was interrupted")
	}
	a.MustHone("gc")
	list := a.MustHone("patch", "list", "c")
	if !strings.Contains(list, id[:4]) || !strings.Contains(list, "cancelled") {
		t.Errorf("patch list:\n%s", list)
	}
	_, stderr, code := a.RunHone("verdict", id)
	if code != 3 || !strings.Contains(stderr, "is cancelled") {
		t.Errorf("judging the cancelled patch again: exit %d: %s", code, stderr)
	}
}

// paraphrase: the same code with its comments reworded and its new
// variable renamed, under another hypothesis, is one idea already judged.
func paraphrase(t *testing.T, a *arena) {
	id := a.proposeTo("c", "one pass", a.Diff(a.Prog("\tfor (int k = 0; k < REPS; k++)", "\tint passes = 1; /* one is enough */\n\tfor (int k = 0; k < passes; k++)")))
	first, _ := a.Verdict(id)
	file := filepath.Join(a.Tmp, "again.diff")
	a.WriteAs(file, a.Diff(a.Prog("\tfor (int k = 0; k < REPS; k++)", "\t// the walks repeat themselves\n\tint   times =  1;\n\tfor (int k = 0; k < times; k++)")))
	_, stderr, code := a.RunHone("patch", "propose", "c", "--hotspot", "main", "--class", "5", "--hypothesis", "remove redundant iterations", "--file", file)
	if code != 3 || !strings.Contains(stderr, "duplicate attempt") || !strings.Contains(stderr, id) || !strings.Contains(stderr, first.ID) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestOptimizerCannotGameTheVerdict runs the cases in shards, each in an
// arena of its own and the shards side by side (t.Parallel), so that one
// shard's builds and gates overlap another's (benches still take the
// machine's turn one at a time). A case checks the host through its own
// arena, whose repository, HOME, tag and ledger no other shard touches;
// within a shard the cases run in order, as they did in one arena.
func TestOptimizerCannotGameTheVerdict(t *testing.T) {
	cases := gamingCases()
	const shards = 4
	for s := range shards {
		t.Run(strconv.Itoa(s), func(t *testing.T) {
			t.Parallel()
			a := newGamingArena(t)
			for i := s; i < len(cases); i += shards {
				c := cases[i]
				if !t.Run(c.name, func(t *testing.T) { a.T = t; c.run(t, a) }) {
					a.T = t
				}
			}
		})
	}
}

// startHeld starts `hone verdict id` without --json (its progress is what
// is waited on) and returns once the verdict is in its unit gate, which
// Arena.Hold keeps it in.
func startHeld(t *testing.T, a *arena, id string) (*exec.Cmd, *testproc.Buffer) {
	t.Helper()
	cmd := a.Command(a.Hone, "verdict", id)
	progress := &testproc.Buffer{}
	cmd.Stderr = progress
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for !strings.Contains(progress.String(), "gate unit") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the verdict never reached its unit gate:\n%s", progress)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return cmd, progress
}
