package verdict

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
)

// compiledSource are the file kinds whose only way into a run is through
// the build: a change to them alone shows in the built outputs or nowhere.
// A script, a data file or a config file can be read by the gates and the
// bench directly, so a patch touching one is always measured.
var compiledSource = map[string]bool{
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".c++": true,
	".hh": true, ".hpp": true, ".hxx": true, ".inl": true, ".ipp": true,
	".s": true, ".S": true, ".asm": true, ".m": true, ".mm": true,
	".go": true, ".rs": true, ".zig": true, ".f": true, ".f90": true, ".swift": true,
}

// sameBuild reports why the candidate is the baseline by everything the
// bench can see; "" when it is not so.
//
// A gate or bench run sees, of its side, only the side's two trees: a copy
// of the checkout as the build left it (/hone/src: the commit's files and
// whatever the build made among them, as a Makefile that builds in place
// leaves programs/lz4 and lib/liblz4.so) and $HONE_OUT; everything else it
// is shown (the system, the toolchains, the Go caches, the environment) is
// the same for both sides of a plain build. So the whole of both trees is
// compared, every file, folder and symlink by type, mode, SHA-256 and link
// target, and the only difference allowed is the compiled source the patch
// changed, which differs by construction and reaches a run only through
// the build, whose every product is among the files compared. Nothing else
// is excused: both sides build at the same paths (/hone/src, /hone/out),
// so an object's or a program's embedded paths are the same, and a build
// that stamps its products with a time or its own path differs and is
// measured. Compiled source reaches a run through the build only if the
// bench compiles nothing itself: a bench command that names a compiler or
// a build tool (go test, cc, cargo, make) is measured, and so is a target
// whose build made no program (a linked file anywhere in the trees that
// the commit does not hold) and nothing in $HONE_OUT, since its bench
// must build what it runs somehow (a script calling cc) and would read the
// changed source itself. A bench that reads the changed source as data (a
// compressor measured on its own sources) runs the same programs on other
// input: nothing it could measure would be the patch's code.
func (j *judging) sameBuild(ctx context.Context, base, cand *build.Side) (string, error) {
	diffs, known := base.Differences(cand)
	if !known || compiles(j.t.Bench.Run) {
		return "", nil
	}
	programs, err := j.builtPrograms(ctx, base)
	if err != nil || (len(programs) == 0 && len(base.Outputs) == 0) {
		return "", err
	}
	changes, err := git.TreeChanges(ctx, j.ws.Root, j.e.Pin, j.e.Commit)
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot list the patch's changes")
	}
	var changed []string
	excused := map[string]bool{}
	for _, c := range changes {
		if !compiledSource[path.Ext(c.Path)] {
			return "", nil
		}
		changed = append(changed, c.Path)
		excused["src/"+c.Path] = true
	}
	for _, p := range diffs {
		if !excused[p] {
			return "", nil
		}
	}
	made := fmt.Sprintf("the %d files of $HONE_OUT", len(base.Outputs))
	if len(programs) > 0 {
		for i, p := range programs {
			programs[i] = jailPath(p)
		}
		made = "its programs " + strings.Join(clipList(programs, 4), ", ")
	}
	return fmt.Sprintf("the candidate's checkout and $HONE_OUT after its build, %s among them, are byte-identical to the baseline's but for the compiled source the patch changes (%s): the bench would run the same programs on the same files on both sides, so nothing was measured",
		made, strings.Join(clipList(changed, 4), ", ")), nil
}

// buildToolRE matches a compiler driver, a compiler or a build tool as a
// command names it: cc, gcc-12, x86_64-linux-gnu-g++, clang++, go, cargo.
var buildToolRE = regexp.MustCompile(`^(?:[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*-)?(?:cc|gcc|c\+\+|g\+\+|clang|clang\+\+|tcc|go|gccgo|cargo|rustc|zig|swift|swiftc|gfortran|make|gmake|cmake|ninja|meson)(?:-[0-9.]+)?$`)

// compiles reports whether a command names a build tool anywhere among its
// words, its arguments included: it might compile at run time.
func compiles(command string) bool {
	for _, w := range strings.FieldsFunc(command, func(r rune) bool {
		return !(r == '.' || r == '_' || r == '-' || r == '+' || r == '/' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) {
		if buildToolRE.MatchString(path.Base(w)) {
			return true
		}
	}
	return false
}

// builtPrograms are the programs of side the build made: those of its
// checkout that the pin does not hold (a committed binary is no proof that
// anything was built), and all of $HONE_OUT's.
func (j *judging) builtPrograms(ctx context.Context, side *build.Side) ([]string, error) {
	all := side.Programs()
	var inSrc []string
	for _, p := range all {
		if rel, ok := strings.CutPrefix(p, "src/"); ok {
			inSrc = append(inSrc, rel)
		}
	}
	if len(inSrc) == 0 {
		return all, nil
	}
	out, err := git.Run(ctx, git.Cmd{Dir: j.ws.Root, Isolated: true, Env: []string{"GIT_LITERAL_PATHSPECS=1"}, Args: append([]string{"ls-tree", "-z", "--full-tree", "--name-only", j.e.Pin, "--"}, inSrc...)})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the pin's files")
	}
	tracked := map[string]bool{}
	for _, name := range strings.Split(string(out), "\x00") {
		tracked["src/"+name] = true
	}
	return slices.DeleteFunc(all, func(p string) bool { return tracked[p] }), nil
}

// jailPath names a path of a side's trees as a command sees it: below the
// checkout, or in $HONE_OUT.
func jailPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "out/"); ok {
		return "$HONE_OUT/" + rest
	}
	return strings.TrimPrefix(p, "src/")
}

// clipList is at most n of list, with "..." for the rest.
func clipList(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(list[:n:n], fmt.Sprintf("... (%d in all)", len(list)))
}

// sameAsBaseline records the verdict of a candidate sameBuild found to be
// the baseline.
func (e *Entry) sameAsBaseline(why string) {
	e.setVerdict(ledger.VerdictRejectedBench, ReasonNoChange, "no change: "+why)
	e.Summary = oneLine(ReasonNoChange + ": identical build outputs, not measured")
}
