package ledger

import "testing"

// One fold can bring a flood's verdict and another agent's proposal in the
// same commit: the agent is due then, and must not wait behind the flood's
// next proposal (e2e/fleet's flood test met this as "still wait behind
// the flood" after three rounds).
func TestFairOrderGivesATieToWhoWasServedLongerAgo(t *testing.T) {
	byProposer := map[string][]Attempt{
		"flood": {{ProposalID: "f2"}},
		"bob":   {{ProposalID: "b1"}},
	}
	arrivals := map[string]arrival{"f2": {seq: 1}, "b1": {seq: 5}, "v1": {seq: 5}}
	served := map[string]int{"flood": 5}
	got := fairOrder([]string{"flood", "bob"}, byProposer, arrivals, served)
	if len(got) != 2 || got[0].ProposalID != "b1" {
		t.Errorf("order %+v, want bob's proposal before the flood's next", got)
	}
}
