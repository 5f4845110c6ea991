package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// An agent waiting on a claimed proposal is told where its verdict stood
// at the runner's last record, and how old that is.
func TestStandingOfAClaimedProposalNamesTheRunnersPhase(t *testing.T) {
	now := time.Now()
	beat := now.Add(-30 * time.Second)
	fleet := &ledger.Fleet{
		Claims: map[string]ledger.RemoteClaim{"p1": {Claim: &ledger.Claim{Patch: "p1", Runner: "r0", Class: "ci", Expires: now.Add(time.Hour)}}},
		Runners: map[string]ledger.RemoteRunner{"r0": {RunnerRecord: &ledger.RunnerRecord{
			Runner: "r0", Judging: "p1", Phase: "gate unit", Pairs: 3, Heartbeat: beat}}},
	}
	got, err := standing(context.Background(), nil, fleet, "p1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"claimed by runner r0 (class ci)", "gate unit as of " + beat.Format(time.TimeOnly), "3 pairs so far"} {
		if !strings.Contains(got, want) {
			t.Errorf("standing = %q, want it to say %q", got, want)
		}
	}
}

// A verdict's phase reaches the runner's record with its gate's name.
func TestPhaseNameNamesTheGate(t *testing.T) {
	for _, c := range []struct {
		p    verdict.Progress
		want string
	}{
		{verdict.Progress{Phase: "gate", Gate: "unit"}, "gate unit"},
		{verdict.Progress{Phase: "bench", Pairs: 4}, "bench"},
	} {
		if got := phaseName(c.p); got != c.want {
			t.Errorf("phaseName(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}
