package risk

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/build"
)

// walks is the baseline program: work that needs nothing of the world.
const walks = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	unsigned long x = argc > 1 ? strtoul(argv[1], 0, 10) : 1, r = 0;
	for (int k = 0; k < REPS; k++)
		for (long i = 0; i < 1000000; i++)
			r = x = x * 6364136223846793005UL + 1442695040888963407UL;
	printf("%lu\n", r);
	return 0;
}
`

// built compiles src with cc and flags into a build output folder of its
// own, as a side's build would leave it.
func built(t *testing.T, src string, flags ...string) *build.Side {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-O2", "-g", "-o", filepath.Join(out, "prog"), filepath.Join(dir, "prog.c")}, flags...)
	if b, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, b)
	}
	return &build.Side{Out: out, Outputs: map[string]string{"prog": "-"}}
}

// A candidate that walks once where the baseline walked REPS times when it
// can tell it runs under hone (its HOME, its parent, PID 1's command line,
// what stdout is, its priority) prints the right answer everywhere and is
// faster only where hone measures it. Its built binary says what it looks
// at, however the source spells the look; a build that strips the symbol
// table, which every such signal reads, is a signal itself.
func TestBuiltCandidateThatLooksAtHowItRunsIsASignal(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("cc is not installed")
	}
	base := built(t, walks, "-DREPS=4")
	once := func(includes, cond string) string {
		return includes + strings.Replace(walks, "k < REPS", "k < ("+cond+" ? 1 : REPS)", 1)
	}
	for _, c := range []struct {
		name, src string
		flags     []string
		want      string
	}{
		{"honest", walks, []string{"-DREPS=1"}, ""},
		{"HOME", once("", `(getenv("HO" "ME") != 0)`), []string{"-DREPS=4"}, "environment in built prog (getenv)"},
		{"parent", once("#include <unistd.h>\n", "(getppid() == 1)"), []string{"-DREPS=4"}, "environment in built prog (getppid)"},
		{"PID 1", once("", `(fopen("/proc/1/cmdline", "r") != 0)`), []string{"-DREPS=4"}, "environment in built prog (fopen)"},
		{"stdout", once("#include <sys/stat.h>\n", "({ struct stat st; fstat(1, &st) == 0 && S_ISFIFO(st.st_mode); })"), []string{"-DREPS=4"}, "environment in built prog (fstat)"},
		{"priority", once("#include <sys/resource.h>\n", "(getpriority(PRIO_PROCESS, 0) < 0)"), []string{"-DREPS=4"}, "environment in built prog (getpriority)"},
		{"stripped", walks, []string{"-DREPS=1", "-s"}, "stripped in built prog"},
	} {
		got := Built(base, built(t, c.src, c.flags...))
		if c.want == "" && len(got) != 0 {
			t.Errorf("%s: signals %q", c.name, got)
		}
		if c.want != "" && !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, c.want) }) {
			t.Errorf("%s: signals %q, want %q", c.name, got, c.want)
		}
	}
}
