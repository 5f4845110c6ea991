package ledger_test

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// A runner's queue is read from what the branch gained since the tip it
// read last (its cache), and must be exactly the queue read from the whole
// history: over random histories of proposals by several committers,
// verdicts, and folds of side lines (inboxes) merged either way round, some
// read half way so the cached tip falls off the first-parent line, the
// queue after every step is the same both ways, and so is where each entry
// arrived and who proposed it, which the queue is made of.
func TestQueueFromWhatChangedIsTheQueueReadWhole(t *testing.T) {
	// A failure prints the seed that replays it (-rapid.seed); no fail
	// file is left in the source tree.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.nofailfile" })
	if !set {
		if err := flag.Set("rapid.nofailfile", "true"); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		dir := newRepo(t)
		l := openLedger(t, dir)
		cache := ledger.ArrivalsCache(l)
		propose := proposeAs(t, dir, l)
		var props []testEntry
		who := rapid.SampledFrom([]string{"alice", "bob", "flood"})
		newProposal := func(rt *rapid.T) {
			props = append(props, propose(who.Draw(rt, "who"), fmt.Sprintf("%02d%02d%012d", n%100, len(props), 0)))
		}
		compare := func(rt *rapid.T, when string) {
			incr := queued(t, dir, ledger.QueueOptions{MaxPerProposer: 2})
			if err := os.Rename(cache, cache+".kept"); err != nil {
				rt.Fatal(err)
			}
			whole := queued(t, dir, ledger.QueueOptions{MaxPerProposer: 2})
			if err := os.Rename(cache+".kept", cache); err != nil {
				rt.Fatal(err)
			}
			if !slices.Equal(incr, whole) {
				rt.Fatalf("%s: the queue from what changed is %v, read whole %v", when, incr, whole)
			}
			a, b, err := ledger.Arrivals(ctx, openLedger(t, dir))
			if err != nil {
				rt.Fatal(err)
			}
			if !maps.Equal(a, b) {
				rt.Fatalf("%s: the arrivals from what changed are %v, read whole %v", when, a, b)
			}
		}
		steps := rapid.IntRange(1, 10).Draw(rt, "steps")
		for i := range steps {
			switch op := rapid.SampledFrom([]string{"propose", "verdict", "fold"}).Draw(rt, "op"); {
			case op == "propose" || len(props) == 0:
				newProposal(rt)
			case op == "verdict":
				p := rapid.SampledFrom(props).Draw(rt, "judged")
				appendOK(t, l, verdictFor(p, ledger.VerdictRejectedBench, "no change"))
			default:
				before := testgit.Git(t, dir, "rev-parse", "hone/ledger")
				for range rapid.IntRange(1, 3).Draw(rt, "folded") {
					newProposal(rt)
				}
				if rapid.Bool().Draw(rt, "read half way") {
					compare(rt, fmt.Sprintf("step %d, half way", i))
				}
				side := testgit.Git(t, dir, "rev-parse", "hone/ledger")
				parents := []string{"-p", before, "-p", side}
				if rapid.Bool().Draw(rt, "side first") {
					parents = []string{"-p", side, "-p", before}
				}
				fold := testgit.Cmd{Dir: dir, Env: []string{"GIT_COMMITTER_NAME=runner", "GIT_COMMITTER_EMAIL=runner@example"}}.
					Git(t, append([]string{"commit-tree", side + "^{tree}"}, append(parents, "-m", "hone: fold the ledgers of other writers")...)...)
				testgit.Git(t, dir, "update-ref", "refs/heads/hone/ledger", fold, side)
			}
			compare(rt, fmt.Sprintf("step %d", i))
		}
	})
	if n == 0 {
		t.Fatal("no history was tried")
	}
}
