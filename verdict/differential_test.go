package verdict

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// layouts = 1: the differential gate is the subject, not code layout.
const diffToml = `[bench]
pairs = 5
max_pairs = 5
layouts = 1

[targets.d]
build = "cc -O2 -o $HONE_OUT/prog prog.c"

  [[targets.d.gates]]
  name     = "differential"
  generate = "sh ./gen.sh"
  run      = "$HONE_OUT/prog"

  [targets.d.bench]
  run = "echo 837799 | $HONE_OUT/prog"
`

// wrongOn makes the program miscount the steps of every number whose last
// two digits are k: wrong on 1% of inputs.
func wrongOn(k int) func(string) string {
	return replace("n, bits(n), steps(n));", fmt.Sprintf("n, bits(n), steps(n) + (n %% 100 == %d));", k))
}

func TestDifferentialGateCatchesAPatchWrongOnOnePercent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "difftarget", "d", diffToml)
	ctx := context.Background()
	f.propose(f.patch(map[string]func(string) string{"prog.c": wrongOn(42)}), "7c7c7c7c7c7c7c7c", "miscount one in a hundred")
	e, err := Run(ctx, f.ws, "7c7c7c7c7c7c7c7c", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	g := e.Gates[len(e.Gates)-1]
	d := g.Differential
	if d == nil || d.Mismatch == nil || !d.Mismatch.Reproduced || d.Seeds != 1000 || d.Compared != 1000 {
		t.Fatalf("differential record %+v", d)
	}
	m := d.Mismatch
	if m.Seed%100 != 42 || InputSeeds(d.Seed, "differential", 1000)[m.Index] != m.Seed {
		t.Errorf("mismatch %+v: its seed does not end in 42 or is not the gate's input %d", m, m.Index)
	}
	t.Logf("summary: %s", e.Summary)

	sh, err := Show(ctx, f.ws, e.ID, "differential")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteShowText(&text, sh); err != nil {
		t.Fatal(err)
	}
	t.Logf("hone verdict show --gate differential:\n%s", text.String())
	for _, want := range []string{fmt.Sprintf("HONE_SEED=%d sh -c 'sh ./gen.sh' > input", m.Seed), "--file case.input", "--- differential/case.candidate.stdout"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("show lacks %q", want)
		}
	}
	// The stored case reproduces: the stored input, run through both
	// programs built outside hone, gives the stored outputs, which differ.
	input, _ := sh.File("case.input")
	bout, _ := sh.File("case.baseline.stdout")
	cout, _ := sh.File("case.candidate.stdout")
	if input == nil || bout == nil || cout == nil || string(input.Data) != fmt.Sprintf("%d\n", m.Seed) {
		t.Fatalf("stored case: input %v, outputs %v %v", input, bout, cout)
	}
	for _, side := range []struct {
		commit string
		want   []byte
	}{{f.pin, bout.Data}, {e.Commit, cout.Data}} {
		if got := buildAndRun(t, f, side.commit, input.Data); !bytes.Equal(got, side.want) {
			t.Errorf("%s on the stored input prints %q, the case stored %q", side.commit[:8], got, side.want)
		}
	}
	if bytes.Equal(bout.Data, cout.Data) {
		t.Errorf("the stored outputs do not differ: %q", bout.Data)
	}
}

// buildAndRun builds the sample program of commit with the host's cc and
// runs it on input, as a person reproducing a stored case would.
func buildAndRun(t *testing.T, f *fixture, commit string, input []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	src, err := exec.Command("git", "-C", f.ws.Root, "show", commit+":"+f.target.Path+"/prog.c").Output()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "prog.c"), src, 0o644)
	if out, err := exec.Command("cc", "-O2", "-o", filepath.Join(dir, "prog"), filepath.Join(dir, "prog.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(dir, "prog"))
	cmd.Stdin = bytes.NewReader(input)
	out, _ := cmd.Output()
	return out
}

func TestDifferentialGatePassesAnHonestPatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "difftarget", "d", diffToml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("n = n % 2 ? 3 * n + 1 : n / 2;", "n = n & 1 ? 3 * n + 1 : n >> 1;")}), Options{})
	g := e.Gates[len(e.Gates)-1]
	if !g.Passed || g.Differential == nil || g.Differential.Compared != 1000 || g.Differential.Mismatch != nil {
		t.Fatalf("differential gate: %+v %+v", g, g.Differential)
	}
}

// TestDifferentialGateRejectsEveryOnePercentPatch judges patches that are
// each wrong on a different 1% of inputs, with the default 1000 seeds and
// a fresh input seed per verdict: every one must be rejected. It judges 3
// by default; HONE_DIFFERENTIAL_VERDICTS=20 (scripts/differential-figures.sh)
// judges 20.
func TestDifferentialGateRejectsEveryOnePercentPatch(t *testing.T) {
	t.Parallel()
	n := 3
	if v := os.Getenv("HONE_DIFFERENTIAL_VERDICTS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 || n > 100 {
			t.Fatalf("HONE_DIFFERENTIAL_VERDICTS=%q: want a count from 1 to 100", v)
		}
	}
	f := newFixture(t, "difftarget", "d", diffToml)
	ctx := context.Background()
	rejected := 0
	for k := range n {
		id := fmt.Sprintf("%016x", 0xd1f0000+k)
		f.propose(f.patch(map[string]func(string) string{"prog.c": wrongOn(k)}), id, fmt.Sprintf("miscount numbers ending in %02d", k))
		e, err := Run(ctx, f.ws, id, Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := e.Gates[len(e.Gates)-1]
		ok := e.Verdict == ledger.VerdictRejectedGate && g.Differential != nil && g.Differential.Mismatch != nil &&
			g.Differential.Mismatch.Reproduced && g.Differential.Mismatch.Seed%100 == int64(k)
		if ok {
			rejected++
		} else {
			t.Errorf("patch wrong on numbers ending in %02d: %s: %s", k, e.Verdict, e.Summary)
		}
	}
	t.Logf("rejected %d of %d verdicts of patches wrong on 1%% of inputs", rejected, n)
}

// The candidate behaves only once it has seen an earlier input: it leaves
// a mark in every place a run can write (the scratch areas, its checkout,
// the Go cache's private folder) and is wrong on 1% of inputs whenever it
// finds none, as it would in every bench run. The driver puts all of them
// back between inputs, so every input finds none.
func TestCandidateCannotRememberEarlierInputs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "difftarget", "d", diffToml)
	mark := func(s string) string {
		s = strings.Replace(s, "#include <stdio.h>\n", `#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int seen(void) {
	const char *dirs[] = {"/tmp", "/var/tmp", getenv("HOME"), "/dev/shm", ".", "/hone/gocache/puts"};
	char p[512];
	int any = 0;
	for (int i = 0; i < 6; i++) {
		if (!dirs[i])
			continue;
		snprintf(p, sizeof p, "%s/.seen", dirs[i]);
		any |= access(p, F_OK) == 0;
		close(open(p, O_CREAT | O_WRONLY, 0644));
	}
	return any;
}
`, 1)
		s = strings.Replace(s, "\tunsigned long n;\n", "\tint behave = seen();\n\tunsigned long n;\n", 1)
		return strings.Replace(s, "n, bits(n), steps(n));", "n, bits(n), steps(n) + (!behave && n % 100 == 7));", 1)
	}
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": mark}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
}

// The candidate behaves only while a helper it started on an earlier
// input is still alive. The driver kills whatever a run leaves behind
// before the next input, as the jail's meter does after any command.
func TestCandidateCannotKeepAHelperAliveAcrossInputs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "difftarget", "d", diffToml)
	helper := func(s string) string {
		s = strings.Replace(s, "#include <stdio.h>\n", `#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int helper_alive(void) {
	DIR *d = opendir("/proc");
	struct dirent *e;
	char p[300], comm[32];
	while (d && (e = readdir(d))) {
		snprintf(p, sizeof p, "/proc/%s/comm", e->d_name);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		int found = fgets(comm, sizeof comm, f) && strncmp(comm, "hone-helper", 11) == 0;
		fclose(f);
		if (found) {
			closedir(d);
			return 1;
		}
	}
	if (d)
		closedir(d);
	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			int fd = open("/dev/null", O_RDWR);
			dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
			prctl(PR_SET_NAME, "hone-helper");
			for (;;)
				pause();
		}
		_exit(0);
	}
	wait(NULL);
	return 0;
}
`, 1)
		s = strings.Replace(s, "\tunsigned long n;\n", "\tint behave = helper_alive();\n\tunsigned long n;\n", 1)
		return strings.Replace(s, "n, bits(n), steps(n));", "n, bits(n), steps(n) + (!behave && n % 100 == 7));", 1)
	}
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": helper}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
}

// Under weak isolation the driver runs on the host: it still judges, and
// it empties only the run's own HOME and TMPDIR, never the host's /tmp,
// /var/tmp or /dev/shm.
func TestDifferentialGateUnderWeakIsolationLeavesTheHostAlone(t *testing.T) {
	t.Parallel()
	var marks []string
	for _, d := range []string{os.TempDir(), "/var/tmp", "/dev/shm"} {
		f, err := os.CreateTemp(d, "hone-host-mark-")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		marks = append(marks, f.Name())
		t.Cleanup(func() { os.Remove(f.Name()) })
	}
	toml := strings.Replace("[sandbox]\nisolation = \"weak\"\n"+diffToml, "run      = \"$HONE_OUT/prog\"", "seeds    = 20\n  run      = \"$HONE_OUT/prog\"", 1)
	f := newFixture(t, "difftarget", "d", toml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("n, bits(n), steps(n));", "n, bits(n), steps(n) + 1);")}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	if d := e.Gates[len(e.Gates)-1].Differential; d == nil || d.Seeds != 20 || d.Mismatch == nil || !d.Mismatch.Reproduced {
		t.Errorf("differential record %+v", d)
	}
	for _, m := range marks {
		if _, err := os.Stat(m); err != nil {
			t.Errorf("the host's %s is gone: %v", m, err)
		}
	}
}
