package memory

import "testing"

// tableInTheBuild is a 900,000-entry table the compiler computes: about
// six seconds of build CPU time here for a program whose runs do no more
// work for it, six times the build-work signal's margin of a second, so
// that a machine several times faster clears it too (300,000 entries
// cost 2.1 s, which a machine twice as fast would not). Load only adds
// CPU time. It stands for any work a patch moves from the measured runs
// into the build.
const tableInTheBuild = `#define A1(i) ((i) * 2654435761u ^ ((i) >> 3)),
#define A10(i) A1(i) A1(i + 1) A1(i + 2) A1(i + 3) A1(i + 4) A1(i + 5) A1(i + 6) A1(i + 7) A1(i + 8) A1(i + 9)
#define A100(i) A10(i) A10(i + 10) A10(i + 20) A10(i + 30) A10(i + 40) A10(i + 50) A10(i + 60) A10(i + 70) A10(i + 80) A10(i + 90)
#define A1000(i) A100(i) A100(i + 100) A100(i + 200) A100(i + 300) A100(i + 400) A100(i + 500) A100(i + 600) A100(i + 700) A100(i + 800) A100(i + 900)
#define A10000(i) A1000(i) A1000(i + 1000) A1000(i + 2000) A1000(i + 3000) A1000(i + 4000) A1000(i + 5000) A1000(i + 6000) A1000(i + 7000) A1000(i + 8000) A1000(i + 9000)
#define A100000(i) A10000(i) A10000(i + 10000) A10000(i + 20000) A10000(i + 30000) A10000(i + 40000) A10000(i + 50000) A10000(i + 60000) A10000(i + 70000) A10000(i + 80000) A10000(i + 90000)
static const unsigned table[] = {A100000(0u) A100000(100000u) A100000(200000u) A100000(300000u) A100000(400000u) A100000(500000u) A100000(600000u) A100000(700000u) A100000(800000u)};
`

// A candidate whose build costs far more while its runs cost less is shown
// to a person: the honest speedup beside a build that does seconds of work.
func TestWorkMovedIntoTheBuildNeedsReview(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, seeded)
	prog := w.edit(append(onceFaster,
		"#include <stdio.h>", "#include <stdio.h>\n"+tableInTheBuild,
		"\tunsigned long long r = 0;", "\tif (input == 1)\n\t\tsink = table[7];\n\tunsigned long long r = 0;")...)
	e := w.judge("a table computed once", prog)
	signals(t, e, "build-work (the candidate's build took")
}
