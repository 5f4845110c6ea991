package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/tier"
)

// walkthroughProject is the Makefile project of cmd/hone's walkthrough
// script (rlz, shaped like lz4), at the top of a repository.
func walkthroughProject(t *testing.T) map[string]string {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("..", "cmd", "hone", "testdata", "script", "walkthrough_make.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range a.Files {
		if name, ok := strings.CutPrefix(f.Name, "rlz/"); ok {
			files[name] = string(f.Data)
		}
	}
	return files
}

// initTarget runs init in a repository holding files (committed, then
// untracked added) and returns the target it wrote, hone.toml's text and
// what init said is left to do.
func initTarget(t *testing.T, files, untracked map[string]string, opts InitOptions) (*Target, string, []string) {
	t.Helper()
	dir := testgit.NewRepo(t, files)
	testgit.WriteFiles(t, dir, untracked)
	for name := range untracked {
		if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts.StartLedger = noLedger
	res, err := Init(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := ws.Target(res.Target)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(res.Config)
	if err != nil {
		t.Fatal(err)
	}
	return tg, string(text), res.Todo
}

func gate(tg *Target, name string) string {
	for _, g := range tg.Gates {
		if g.Name == name {
			return g.Run
		}
	}
	return ""
}

// A top Makefile whose default goal builds its program through a sub-make,
// with a light test target and a heavy one, and a program that reads its
// input on stdin. A reading of the Makefiles alone guesses the program
// takes the seed as its argument and makes the heavy `test` the unit gate.
// Built and run in the jail, init finds the program the build made (also
// when an earlier build left one in the working tree), runs it
// as a filter on words made from the seed, and chooses `test-fast`, saying
// from its dry run why `test` is heavy; the workload it ran is marked for
// review.
func TestInitRunsAMakefileProjectToFindItsProgramAndALightTestTarget(t *testing.T) {
	tier.Jail(t)
	needTools(t, []string{"make", "cc", "awk"})
	files := walkthroughProject(t)

	read, _, _ := initTarget(t, files, nil, InitOptions{NoBuild: true})
	if read.Bench.Run != "$HONE_ROOT/cli/rlz {seed}" || gate(read, "unit") != "make -C $HONE_ROOT test" {
		t.Fatalf("the reading of the Makefiles alone wrote bench %q and unit gate %q; this test is about what only running shows", read.Bench.Run, gate(read, "unit"))
	}

	// A program an earlier build left in the working tree, untracked: make
	// would take it as built, and the build would seem to make nothing.
	stale, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	tg, text, todo := initTarget(t, files, map[string]string{"cli/rlz": string(stale)}, InitOptions{})
	if got := gate(tg, "unit"); got != "make -C $HONE_ROOT test-fast" {
		t.Errorf("unit gate %q, want the light make -C $HONE_ROOT test-fast", got)
	}
	if !strings.Contains(text, "`make test` prints") || !strings.Contains(text, "names 2GB, fuzz.") {
		t.Errorf("hone.toml does not say why make test is heavy:\n%s", text)
	}
	golden := gate(tg, "golden")
	if !strings.HasPrefix(golden, `awk -v seed="$HONE_SEED"`) || !strings.HasSuffix(golden, "$HONE_ROOT/cli/rlz | cksum\n") || tg.Bench.Run != golden {
		t.Errorf("golden gate %q and bench %q, want cli/rlz fed words made from the seed", golden, tg.Bench.Run)
	}
	if n := strings.Count(text, "# "+reviewMark+"\n"); n != 2 {
		t.Errorf("%d review marks in hone.toml, want one on the gate and one on the bench:\n%s", n, text)
	}
	if !slices.ContainsFunc(todo, func(s string) bool { return strings.HasPrefix(s, "review the equivalence gate golden and the bench") }) ||
		slices.ContainsFunc(todo, func(s string) bool { return strings.HasPrefix(s, "check the arguments of ") }) {
		t.Errorf("to do: %q", todo)
	}
}

// A program whose output does not depend on the seed, given as an
// argument or as input, is no workload: init writes neither the guess of
// its reading nor a filter, but the FILL IN snippets, and says what it
// ran. A project whose only test target is heavy gets it as the unit gate,
// with a comment that says it looks heavy.
func TestInitWritesNoWorkloadThatDoesNotDependOnTheSeed(t *testing.T) {
	tier.Jail(t)
	needTools(t, []string{"make", "cc", "awk"})
	tg, text, todo := initTarget(t, map[string]string{
		"hello/Makefile": "all: hello\nhello: hello.c\n\t$(CC) -o $@ hello.c\ntest: hello\n\t./hello\n\tfor s in 1 2; do ./hello > /dev/null; done # and the fuzzers\n.PHONY: all test\n",
		"hello/hello.c":  "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n",
	}, nil, InitOptions{})
	if tg.Bench.Run != "" || gate(tg, "golden") != "" {
		t.Errorf("bench %q and golden gate %q, want neither", tg.Bench.Run, gate(tg, "golden"))
	}
	if !strings.Contains(text, "# FILL IN: the bench") || !strings.Contains(text, "# FILL IN: an equivalence gate") {
		t.Errorf("hone.toml has no FILL IN for the bench and the gate:\n%s", text)
	}
	if !slices.ContainsFunc(todo, func(s string) bool {
		return strings.HasPrefix(s, "write the equivalence gate and the bench marked FILL IN") && strings.Contains(s, "`./hello {seed}` printed the same for two seeds")
	}) {
		t.Errorf("to do: %q", todo)
	}
	if gate(tg, "unit") != "make test" || !strings.Contains(text, "It chose `make test`, the lightest, and it looks heavy") {
		t.Errorf("unit gate %q; hone.toml:\n%s", gate(tg, "unit"), text)
	}
}

// An init interrupted while it builds the project writes nothing: no
// hone.toml made of what it had not yet found out.
func TestInitInterruptedWhileBuildingWritesNothing(t *testing.T) {
	dir := testgit.NewRepo(t, walkthroughProject(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Init(ctx, dir, InitOptions{StartLedger: noLedger}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Init after the interrupt: %v, want a refusal saying it was interrupted", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
		t.Errorf("hone.toml after the interrupt: %v", err)
	}
}
