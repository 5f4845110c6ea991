package verdict

import (
	"context"
	"fmt"
	"maps"
	"path"
	"strings"

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
// bench can see: every file the patch changed is compiled source and the
// build outputs are byte-identical, all of them hashed. Such a candidate
// runs the baseline's very programs, so measuring it could only find noise;
// "" when it is not so.
func (j *judging) sameBuild(ctx context.Context, base, cand *build.Side) (string, error) {
	if len(base.Outputs) == 0 || len(base.Outputs) >= build.MaxOutputs || !maps.Equal(base.Outputs, cand.Outputs) {
		return "", nil
	}
	changes, err := git.TreeChanges(ctx, j.ws.Root, j.e.Pin, j.e.Commit)
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot list the patch's changes")
	}
	var changed []string
	for _, c := range changes {
		if !compiledSource[path.Ext(c.Path)] {
			return "", nil
		}
		changed = append(changed, c.Path)
	}
	return fmt.Sprintf("the candidate's build outputs (%d files) are byte-identical to the baseline's and the patch changes only compiled source (%s): the bench would run the same programs on both sides, so nothing was measured",
		len(base.Outputs), strings.Join(changed, ", ")), nil
}

// sameAsBaseline records the verdict of a candidate sameBuild found to be
// the baseline.
func (e *Entry) sameAsBaseline(why string) {
	e.setVerdict(ledger.VerdictRejectedBench, ReasonNoChange, "no change: "+why)
	e.Summary = oneLine(ReasonNoChange + ": identical build outputs, not measured")
}
