package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// inPlaceWorkspace is the fixture's program built as many C projects
// build theirs (testdata/inplace): make at the target's top hands over to
// programs/, whose Makefile compiles with make's own CC and links the
// objects with $(CC), where the sources are; the top one copies the
// program up. Gates and bench run that copy, in the checkout: nothing is
// in $HONE_OUT. build is the build command.
func inPlaceWorkspace(t *testing.T, build string) *workspace {
	files := map[string]string{
		"targets/c/Makefile":          read(t, "inplace/Makefile"),
		"targets/c/programs/Makefile": read(t, "inplace/programs/Makefile"),
	}
	return openWorkspace(t, files, buildWith(build), func(config string) string {
		return strings.ReplaceAll(config, "$HONE_OUT/prog", "./prog")
	})
}

// A program built and linked in the checkout is judged in four layouts,
// as one built into $HONE_OUT is: the pin's and the candidate's programs
// are others in each layout, from one build of each side relinked.
func TestAProgramMakeLinksInTheCheckoutIsJudgedInFourLayouts(t *testing.T) {
	t.Parallel()
	w := inPlaceWorkspace(t, "make")
	tc := layoutOnly[0]
	e := w.judge(tc.name, tc.edit)
	if e.Bench == nil || e.Bench.Layout == nil {
		t.Fatalf("%s (%s): %s: no bench", e.Verdict, e.Reason, e.Summary)
	}
	r := e.Bench.Layout
	if e.HasFlag(ledger.FlagOneLayout) || len(r.Layouts) != 4 {
		t.Fatalf("judged in %d layouts: %q", len(r.Layouts), r.OneLayout)
	}
	base, cand := map[string]bool{}, map[string]bool{}
	for _, l := range r.Layouts {
		base[l.BaselineSHA256], cand[l.CandidateSHA256] = true, true
	}
	if len(base) != 4 || len(cand) != 4 || r.Relinked != 4 {
		t.Errorf("%d distinct pin programs, %d candidate programs in 4 layouts; %d of 6 layout builds relinked, not 4", len(base), len(cand), r.Relinked)
	}
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != verdict.ReasonNoChange {
		t.Errorf("a candidate that only moves the hot loop: %s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
}

// A build that calls its compiler by path cannot be laid out. The verdict
// is of one layout and says which command linked and what it lacked, and
// it knew after one layout build of the pin (the run folder holds no
// other), not after one per layout; the candidate is built in none.
func TestAMakeBuildThatNamesItsCompilerByPathSaysWhyAfterOneBuild(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/cc"); err != nil {
		t.Skip("no /usr/bin/cc")
	}
	w := inPlaceWorkspace(t, "make CC=/usr/bin/cc")
	tc := layoutOnly[0]
	e := w.judgeFiles(tc.name, map[string]string{"targets/c/prog.c": tc.edit(w.pin)}, "--keep")
	const want = "the pin does not link in another layout: `/usr/bin/cc -O2 -fno-toplevel-reorder -fno-align-functions -fno-align-loops -fno-align-jumps -fno-align-labels prog.o -o prog` names its compiler by path"
	if e.Bench == nil || e.Bench.Layout == nil || !e.HasFlag(ledger.FlagOneLayout) || !strings.HasPrefix(e.Bench.Layout.OneLayout, want) {
		t.Fatalf("%s (%s): %s; want one layout because %q", e.Verdict, e.Reason, e.Summary, want)
	}
	if len(e.KeptCheckouts) != 1 {
		t.Fatalf("kept %v", e.KeptCheckouts)
	}
	var layouts []string
	for _, side := range []string{"baseline", "candidate"} {
		m, err := filepath.Glob(filepath.Join(e.KeptCheckouts[0], side+"-layout-*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			layouts = append(layouts, filepath.Base(p))
		}
	}
	if len(layouts) != 1 || layouts[0] != "baseline-layout-1" {
		t.Errorf("layout builds %v, want only baseline-layout-1", layouts)
	}
}
