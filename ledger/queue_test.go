package ledger_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// The queue takes proposals in the order they reached the ledger, round
// robin across proposers (the committers here: nothing is signed), holds
// back a proposer's proposals over the cap, and queues a patch commit once
// whatever the number of patch ids naming it.
func TestQueueIsFairAcrossProposersAndJudgesACommitOnce(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	propose := proposeAs(t, dir, l)
	a1 := propose("flood", "a1a1a1a1a1a1a1a1")
	propose("flood", "a2a2a2a2a2a2a2a2")
	propose("flood", "a3a3a3a3a3a3a3a3")
	propose("honest", "b1b1b1b1b1b1b1b1")
	// A second patch id for a1's commit.
	twin := a1
	twin.ID, twin.Schema, twin.Created, twin.PatchID = "", 0, twin.Created.AddDate(-1, 0, 0), "c1c1c1c1c1c1c1c1"
	testgit.Git(t, dir, "update-ref", ledger.PatchRef(twin.PatchID), a1.Commit)
	if _, err := l.Append(ctx, &twin); err != nil {
		t.Fatal(err)
	}

	skipped := map[string]string{}
	got := queued(t, dir, ledger.QueueOptions{MaxPerProposer: 2, Skip: func(a ledger.Attempt, why string) { skipped[a.PatchID] = why }})
	if strings.Join(got, " ") != "a1 b1 a2" {
		t.Errorf("queue %v, want a1 b1 a2", got)
	}
	if !strings.Contains(skipped["a3a3a3a3a3a3a3a3"], "max_queued") || !strings.Contains(skipped["c1c1c1c1c1c1c1c1"], "also patch a1a1a1a1a1a1a1a1") || len(skipped) != 2 {
		t.Errorf("skipped %v", skipped)
	}
}

// A runner folds, in one commit, an inbox holding a flooder's proposal
// and an honest agent's: each keeps its own proposer (who wrote it), so
// the honest proposal takes its own turn of the round robin instead of
// queueing behind the flood under the folder's name.
func TestQueueCountsAFoldedProposalForWhoWroteIt(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	propose := proposeAs(t, dir, l)
	propose("flood", "f1f1f1f1f1f1f1f1")
	propose("flood", "f2f2f2f2f2f2f2f2")
	propose("flood", "f3f3f3f3f3f3f3f3")
	before := testgit.Git(t, dir, "rev-parse", "hone/ledger")
	propose("flood", "f4f4f4f4f4f4f4f4")
	propose("honest", "h1h1h1h1h1h1h1h1")
	inbox := testgit.Git(t, dir, "rev-parse", "hone/ledger")
	fold := testgit.Cmd{Dir: dir, Env: []string{"GIT_COMMITTER_NAME=runner", "GIT_COMMITTER_EMAIL=runner@example"}}.
		Git(t, "commit-tree", inbox+"^{tree}", "-p", before, "-p", inbox, "-m", "hone: fold the ledgers of other writers")
	testgit.Git(t, dir, "update-ref", "refs/heads/hone/ledger", fold, inbox)

	if got := queued(t, dir, ledger.QueueOptions{MaxPerProposer: 2}); strings.Join(got, " ") != "f1 h1 f2" {
		t.Errorf("queue %v, want f1 h1 f2: the folded honest proposal in its own turn", got)
	}
}

// proposeAs returns a function that proposes patch id in dir as committer
// who, the proposer the queue knows when nothing is signed.
func proposeAs(t *testing.T, dir string, l *ledger.Ledger) func(who, id string) testEntry {
	return func(who, id string) testEntry {
		t.Helper()
		t.Setenv("GIT_COMMITTER_NAME", who)
		t.Setenv("GIT_COMMITTER_EMAIL", who+"@example")
		p := makePatch(t, dir, id)
		if _, err := l.Append(ctx, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// queued is the queue of dir's ledger, each patch id by its first two
// characters.
func queued(t *testing.T, dir string, o ledger.QueueOptions) []string {
	t.Helper()
	q, err := openLedger(t, dir).Queue(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range q {
		got = append(got, a.PatchID[:2])
	}
	return got
}

// A runner judges one proposal a round (`hone runner --once`). After the
// flood's oldest is judged, the honest proposal that arrived behind the
// whole flood is next, not the flood's second: a proposer's turn comes
// after every proposer that was due before its last verdict.
func TestQueueGivesAnotherProposerTheTurnAfterAFloodsVerdict(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	propose := proposeAs(t, dir, l)
	f1 := propose("flood", "f1f1f1f1f1f1f1f1")
	propose("flood", "f2f2f2f2f2f2f2f2")
	propose("flood", "f3f3f3f3f3f3f3f3")
	propose("honest", "h1h1h1h1h1h1h1h1")
	if got := queued(t, dir, ledger.QueueOptions{}); strings.Join(got, " ") != "f1 h1 f2 f3" {
		t.Errorf("queue %v, want f1 h1 f2 f3", got)
	}
	appendOK(t, l, verdictFor(f1, ledger.VerdictRejectedBench, "no change"))
	if got := queued(t, dir, ledger.QueueOptions{}); strings.Join(got, " ") != "h1 f2 f3" {
		t.Errorf("after f1's verdict the queue is %v, want h1 f2 f3", got)
	}
	propose("late", "l1l1l1l1l1l1l1l1")
	if got := queued(t, dir, ledger.QueueOptions{}); strings.Join(got, " ") != "h1 f2 l1 f3" {
		t.Errorf("with a late proposer the queue is %v, want h1 f2 l1 f3", got)
	}
}

// Where the server records whom it authenticated for each proposal, that
// identity is the proposer: one identity's proposals under many committer
// names take one turn and count against one cap, and proposals with no
// recorded identity share one turn.
func TestQueueTakesTurnsByAuthenticatedPusher(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	propose := proposeAs(t, dir, l)
	pushers := map[string]string{}
	for i, name := range []string{"m1", "m2", "m3"} {
		p := propose(name, fmt.Sprintf("f%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d", i, i, i, i, i, i, i, i, i, i, i, i, i, i, i))
		pushers[p.ID] = "mallory"
	}
	propose("u1", "u1u1u1u1u1u1u1u1")
	propose("u2", "u2u2u2u2u2u2u2u2")
	h := propose("alice", "h1h1h1h1h1h1h1h1")
	pushers[h.ID] = "alice"

	got := queued(t, dir, ledger.QueueOptions{MaxPerProposer: 2, Pushers: pushers})
	if strings.Join(got, " ") != "f0 u1 h1 f1 u2" {
		t.Errorf("queue %v, want f0 u1 h1 f1 u2: mallory one proposer capped at 2, the unrecorded two one proposer", got)
	}
	if got := queued(t, dir, ledger.QueueOptions{MaxPerProposer: 2}); strings.Join(got, " ") != "f0 f1 f2 u1 u2 h1" {
		t.Errorf("without a record the queue is %v, want f0 f1 f2 u1 u2 h1 (by committer)", got)
	}
}
