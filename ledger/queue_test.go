package ledger_test

import (
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
	propose := func(who, id string) testEntry {
		t.Setenv("GIT_COMMITTER_NAME", who)
		t.Setenv("GIT_COMMITTER_EMAIL", who+"@example")
		p := makePatch(t, dir, id)
		if _, err := l.Append(ctx, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
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
	q, err := openLedger(t, dir).Queue(ctx, ledger.QueueOptions{MaxPerProposer: 2, Skip: func(a ledger.Attempt, why string) { skipped[a.PatchID] = why }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range q {
		got = append(got, a.PatchID[:2])
	}
	if strings.Join(got, " ") != "a1 b1 a2" {
		t.Errorf("queue %v, want a1 b1 a2", got)
	}
	if !strings.Contains(skipped["a3a3a3a3a3a3a3a3"], "max_queued") || !strings.Contains(skipped["c1c1c1c1c1c1c1c1"], "also patch a1a1a1a1a1a1a1a1") || len(skipped) != 2 {
		t.Errorf("skipped %v", skipped)
	}
}
