package runner

import (
	"context"
	"sort"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Status is the fleet as a remote shows it.
type Status struct {
	Remote  string       `json:"remote"`
	Queue   int          `json:"queue"`   // proposals without a trusted verdict
	Waiting []string     `json:"waiting"` // those of them no live claim holds, oldest first
	Claims  []ClaimView  `json:"claims"`
	Runners []RunnerView `json:"runners"`
	// Hosts are the runners by host, placed by their last verdicts.
	Hosts []HostView `json:"hosts"`
	// Warnings: runners_share_host for each host with more than one.
	Warnings []errs.Warning `json:"warnings"`
}

// ClaimView is one claim: who holds which patch, until when.
type ClaimView struct {
	PatchID string    `json:"patch_id"`
	Runner  string    `json:"runner"`
	Class   string    `json:"class"`
	Renewed time.Time `json:"renewed"`
	Expires time.Time `json:"expires"`
	Live    bool      `json:"live"`
	Error   string    `json:"error,omitempty"` // a ref that holds no readable claim
}

// RunnerView is one runner's record.
type RunnerView struct {
	ledger.RunnerRecord
	// Host is where its last verdict was measured; empty before its first.
	Host string `json:"host,omitempty"`
}

// GetStatus pulls the ledger from remote and reads its claims and runners.
func GetStatus(ctx context.Context, ws *workspace.Workspace, remote string) (*Status, error) {
	if remote == "" {
		remote = "origin"
	}
	l := ledger.Open(ws)
	if _, err := l.Pull(ctx, remote); err != nil {
		return nil, err
	}
	fleet, err := l.FetchFleet(ctx, remote)
	if err != nil {
		return nil, err
	}
	attempts, err := l.Attempts(ctx, ledger.Filter{})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	st := &Status{Remote: remote, Waiting: []string{}, Claims: []ClaimView{}, Runners: []RunnerView{}}
	for _, a := range attempts {
		if a.ProposalID == "" || a.Outcome() != nil {
			continue
		}
		st.Queue++
		if c, ok := fleet.Claims[a.PatchID]; !ok || !c.Live(now) {
			st.Waiting = append(st.Waiting, a.PatchID)
		}
	}
	for id, c := range fleet.Claims {
		v := ClaimView{PatchID: id, Live: c.Live(now)}
		if c.Err != nil {
			v.Error = c.Err.Error()
		} else {
			v.Runner, v.Class, v.Renewed, v.Expires = c.Runner, c.Class, c.Renewed, c.Expires
		}
		st.Claims = append(st.Claims, v)
	}
	sort.Slice(st.Claims, func(i, j int) bool { return st.Claims[i].PatchID < st.Claims[j].PatchID })
	for _, r := range fleet.Runners {
		st.Runners = append(st.Runners, RunnerView{RunnerRecord: *r.RunnerRecord, Host: hostOf(ctx, l, r.RunnerRecord)})
	}
	sort.Slice(st.Runners, func(i, j int) bool { return st.Runners[i].Runner < st.Runners[j].Runner })
	st.Hosts, st.Warnings = byHost(st.Runners)
	if st.Warnings == nil {
		st.Warnings = []errs.Warning{}
	}
	return st, nil
}
