package mcp

import (
	"context"
	"time"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Attempt is one proposed patch with the verdicts it received: the unit the
// anti-double-attempt rule is about.
type Attempt struct {
	PatchID    string    `json:"patch_id" jsonschema:"the patch id, as given to run_verdict"`
	AttemptKey string    `json:"attempt_key" jsonschema:"hash of (target, hotspot, class, normalized hypothesis); a key with a verdict may not be proposed again"`
	Hotspot    string    `json:"hotspot"`
	Class      int       `json:"class" jsonschema:"the playbook class applied (1-7)"`
	Hypothesis string    `json:"hypothesis"`
	Proposed   time.Time `json:"proposed"`
	ProposalID string    `json:"proposal_id" jsonschema:"id of the proposal's ledger entry"`
	Verdicts   []Judged  `json:"verdicts" jsonschema:"verdicts reached on this patch, oldest first; empty when it was never judged"`
}

// Judged is one verdict on an attempt.
type Judged struct {
	ID      string    `json:"id" jsonschema:"id of the verdict's ledger entry"`
	Verdict string    `json:"verdict" jsonschema:"accepted, needs-human-review, rejected-gate, rejected-bench or error"`
	Summary string    `json:"summary"`
	Created time.Time `json:"created"`
}

// Attempts lists the target's proposals, oldest first, each with its verdicts.
// Verdicts whose proposal is missing (a ledger merged from elsewhere) still
// appear, under an attempt built from the verdict's own attempt fields.
func Attempts(ctx context.Context, ws *workspace.Workspace, target string) ([]Attempt, error) {
	entries, err := ledger.Open(ws).List(ctx, ledger.Filter{Target: target})
	if err != nil {
		return nil, err
	}
	out := []Attempt{}
	byPatch := map[string]int{}
	attempt := func(c *ledger.Common) *Attempt {
		if i, ok := byPatch[c.PatchID]; ok {
			return &out[i]
		}
		byPatch[c.PatchID] = len(out)
		out = append(out, Attempt{PatchID: c.PatchID, AttemptKey: c.AttemptKey, Hotspot: c.Hotspot,
			Class: c.Class, Hypothesis: c.Hypothesis, Proposed: c.Created, Verdicts: []Judged{}})
		return &out[len(out)-1]
	}
	for _, e := range entries {
		switch e.Kind {
		case ledger.KindProposal:
			a := attempt(&e.Common)
			if a.ProposalID == "" {
				a.ProposalID, a.Proposed = e.ID, e.Created
			}
		case ledger.KindVerdict:
			a := attempt(&e.Common)
			a.Verdicts = append(a.Verdicts, Judged{ID: e.ID, Verdict: e.Verdict, Summary: e.Summary, Created: e.Created})
		}
	}
	return out, nil
}
