package ledger

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/hone-perf/hone/internal/lock"
)

// Attempt is one patch proposed to a target with every verdict it received:
// the unit the one-verdict-per-attempt rule is about. It is the one view of
// attempts: `hone ledger list`, `hone patch list`, MCP's read_ledger, the
// report, an agent's brief and the anti-double-attempt rule all read it. It
// is built from the index alone (verified against the branch tip), with each
// verdict's signer from the ledger commit that added it.
type Attempt struct {
	PatchID    string    `json:"patch_id" jsonschema:"the patch id, as given to run_verdict"`
	Target     string    `json:"target"`
	AttemptKey string    `json:"attempt_key" jsonschema:"hash of (target, hotspot, class, normalized hypothesis); a key with a trusted verdict may not be proposed again"`
	Hotspot    string    `json:"hotspot"`
	Class      int       `json:"class" jsonschema:"the playbook class applied (1-7)"`
	Hypothesis string    `json:"hypothesis"`
	Pin        string    `json:"pin,omitempty" jsonschema:"the commit the patch applies to"`
	Commit     string    `json:"commit,omitempty" jsonschema:"the patch commit"`
	Proposed   time.Time `json:"proposed"`
	ProposalID string    `json:"proposal_id" jsonschema:"id of the proposal's ledger entry; empty when only verdicts reached this clone"`
	Verdicts   []Judged  `json:"verdicts" jsonschema:"verdicts reached on this patch, oldest first; empty when it was never judged"`

	started []Judged // started entries, until unfinished folds them in
}

// Judged is one verdict on an attempt, with who wrote it.
type Judged struct {
	ID      string    `json:"id" jsonschema:"id of the verdict's ledger entry"`
	Verdict string    `json:"verdict" jsonschema:"accepted, needs-human-review, rejected-gate, rejected-bench, error, cancelled (started and never finished: it counts as the outcome) or in-progress (still running)"`
	Summary string    `json:"summary"`
	Speedup float64   `json:"speedup,omitempty" jsonschema:"baseline/candidate median of the deciding metric; absent without a bench"`
	Created time.Time `json:"created"`
	// Flags and RunnerClass are the verdict's Common.Flags and
	// Common.RunnerClass, read from the index row.
	Flags       []string `json:"flags,omitempty" jsonschema:"facts about the verdict: weak-isolation, unprotected-pin, stale-pin, unseeded, work-unverified, one-layout, layout-sensitive"`
	RunnerClass string   `json:"runner_class,omitempty" jsonschema:"the label of the runner that judged the verdict; absent when judged in a workspace"`
	// Signer is Signer.Name: a trusted key's principal, "untrusted",
	// "unsigned", or a key fingerprint when no signers are configured.
	Signer    string `json:"signer" jsonschema:"who signed the ledger commit that added the verdict: a principal of allowed_signers, untrusted, unsigned, or a key fingerprint"`
	Trusted   bool   `json:"trusted" jsonschema:"false for a verdict no allowed signer signed, when signers are configured; such a verdict does not count"`
	Signature string `json:"signature" jsonschema:"good, bad or none"`
	AddedBy   string `json:"added_by,omitempty" jsonschema:"the ledger commit that added the verdict"`
}

// Latest is the newest verdict, trusted or not; nil while there is none.
func (a *Attempt) Latest() *Judged {
	if len(a.Verdicts) == 0 {
		return nil
	}
	return &a.Verdicts[len(a.Verdicts)-1]
}

// Outcome is the newest trusted verdict, a verdict that never finished
// counting as cancelled: what the attempt counts as for the
// one-verdict-per-attempt rule. nil while no trusted verdict exists, so an
// agent's own verdict cannot block the runner's. A verdict still running
// is not an outcome.
func (a *Attempt) Outcome() *Judged {
	for i := len(a.Verdicts) - 1; i >= 0; i-- {
		if v := &a.Verdicts[i]; v.Trusted && v.Verdict != VerdictInProgress {
			return v
		}
	}
	return nil
}

// Running is the trusted verdict of a still running, or nil.
func (a *Attempt) Running() *Judged {
	if n := len(a.Verdicts); n > 0 && a.Verdicts[n-1].Trusted && a.Verdicts[n-1].Verdict == VerdictInProgress {
		return &a.Verdicts[n-1]
	}
	return nil
}

// Attempts returns the attempts whose proposal or verdicts f selects (its
// Kind is ignored), oldest first. Verdicts whose proposal is missing (a
// ledger merged from elsewhere) still appear, under an attempt built from
// the verdict's own attempt fields.
func (l *Ledger) Attempts(ctx context.Context, f Filter) ([]Attempt, error) {
	f.Kind = ""
	g, err := l.gather(ctx, f)
	if err != nil {
		return nil, err
	}
	for i := range g.attempts {
		if g.attempts[i].Verdicts == nil {
			g.attempts[i].Verdicts = []Judged{}
		}
	}
	return g.attempts, nil
}

// gathered is what one reading of the index yields: the matching rows in
// time order, and the attempts of their patches.
type gathered struct {
	rows     []*row
	attempts []Attempt
	byPatch  map[string]int // patch id -> index in attempts
}

// gather reads the rows f selects and every proposal and verdict of the
// patches they name. With a patch or attempt key few rows match, and the
// verdicts of their patches are looked up after; otherwise one pass takes
// the matching rows and every proposal and verdict.
func (l *Ledger) gather(ctx context.Context, f Filter) (*gathered, error) {
	var rows, related []row
	keep := f.keep()
	selective := f.AttemptKey != "" || f.PatchID != ""
	if !selective {
		match := keep
		keep = func(line []byte) bool { return isAttemptLine(line) || match == nil || match(line) }
	}
	err := l.scan(ctx, keep, func(lines int) {
		rows, related = nil, nil
		if !selective {
			// Most rows will match: size for all of them at once.
			rows = make([]row, 0, lines)
		}
	}, func(r *row) bool {
		if f.match(r) {
			rows = append(rows, *r)
		} else if r.Kind == string(KindProposal) || r.Kind == string(KindVerdict) || r.Kind == string(KindStarted) {
			related = append(related, *r)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if selective {
		seen := map[string]bool{}
		for _, r := range rows {
			if r.PatchID == "" || seen[r.PatchID] {
				continue
			}
			seen[r.PatchID] = true
			vs := Filter{PatchID: r.PatchID}
			if err := l.scan(ctx, vs.keep(), func(int) {}, func(x *row) bool {
				if !f.match(x) {
					related = append(related, *x)
				}
				return true
			}); err != nil {
				return nil, err
			}
		}
	}
	// Rows are large: sort pointers to them, not the rows.
	g := &gathered{rows: byTime(rows, nil), attempts: make([]Attempt, 0, len(rows)), byPatch: make(map[string]int, len(rows))}
	var wanted map[string]bool // nil: every patch of rows and related is wanted
	if len(related) > 0 {
		wanted = make(map[string]bool, len(rows))
		for _, r := range rows {
			wanted[r.PatchID] = true
		}
	}
	for _, r := range byTime(rows, related) {
		if r.PatchID == "" || (wanted != nil && !wanted[r.PatchID]) {
			continue
		}
		switch r.Kind {
		case string(KindProposal):
			a := g.attempt(r)
			if a.ProposalID == "" {
				a.ProposalID, a.Proposed = r.ID, time.Unix(0, r.Created).UTC()
				a.AttemptKey, a.Hotspot, a.Class, a.Hypothesis, a.Pin, a.Commit = r.AttemptKey, r.Hotspot, r.Class, r.Hypothesis, r.Pin, r.Commit
			}
		case string(KindVerdict), string(KindStarted):
			s, err := l.signerOf(ctx, r.AddedBy)
			if err != nil {
				return nil, err
			}
			if tr, err := l.trust(ctx); err != nil {
				return nil, err
			} else if tr.foreign(r.Repository) {
				s.Trusted, s.Principal, s.Signature = false, "", ForeignRepository
			}
			a := g.attempt(r)
			j := Judged{ID: r.ID, Verdict: r.Verdict, Summary: r.Summary, Speedup: r.Speedup, Flags: r.Flags, RunnerClass: r.RunnerClass,
				Created: time.Unix(0, r.Created).UTC(), Signer: s.Name(), Trusted: s.Trusted, Signature: s.Signature, AddedBy: s.Commit}
			if r.Kind == string(KindStarted) {
				a.started = append(a.started, j)
				continue
			}
			a.Verdicts = append(a.Verdicts, j)
		}
	}
	for i := range g.attempts {
		l.unfinished(&g.attempts[i])
	}
	return g, nil
}

// unfinished adds to a's verdicts, as cancelled or in progress, the
// newest started entry that no verdict of the same trust followed: a
// verdict that was killed or crashed before it could record anything, or
// one still running (the patch's judging lock is held). Only the newest
// counts: an older one was superseded by what came after it.
func (l *Ledger) unfinished(a *Attempt) {
	started := a.started
	a.started = nil
	for _, trusted := range []bool{true, false} {
		var last *Judged
		for i := range started {
			if started[i].Trusted == trusted {
				last = &started[i]
			}
		}
		if last == nil {
			continue
		}
		followed := false
		for _, v := range a.Verdicts {
			if v.Trusted == trusted && v.ID > last.ID {
				followed = true
			}
		}
		if followed {
			continue
		}
		j := *last
		j.Verdict, j.Summary = VerdictCancelled, "started "+j.Created.Format(time.RFC3339)+" and never finished (killed or crashed): the attempt counts as cancelled"
		if lock.Held(l.JudgingLock(a.PatchID)) {
			j.Verdict, j.Summary = VerdictInProgress, "started "+j.Created.Format(time.RFC3339)+", still running"
		}
		at := len(a.Verdicts)
		for at > 0 && a.Verdicts[at-1].ID > j.ID {
			at--
		}
		a.Verdicts = slices.Insert(a.Verdicts, at, j)
	}
}

// JudgingLock is the lock a verdict of patchID holds for its whole life,
// so that a started entry can tell a running verdict from a dead one.
func (l *Ledger) JudgingLock(patchID string) string {
	return l.ws.StatePath("verdicts", patchID+".lock")
}

// attempt returns the attempt of r's patch, made from r's own attempt
// fields when it is the first entry seen for that patch.
func (g *gathered) attempt(r *row) *Attempt {
	if i, ok := g.byPatch[r.PatchID]; ok {
		return &g.attempts[i]
	}
	g.byPatch[r.PatchID] = len(g.attempts)
	g.attempts = append(g.attempts, Attempt{PatchID: r.PatchID, Target: r.Target, AttemptKey: r.AttemptKey,
		Hotspot: r.Hotspot, Class: r.Class, Hypothesis: r.Hypothesis, Pin: r.Pin, Commit: r.Commit,
		Proposed: time.Unix(0, r.Created).UTC()})
	return &g.attempts[len(g.attempts)-1]
}

var (
	proposalSeg = []byte(KindProposal)
	verdictSeg  = []byte(KindVerdict)
	startedSeg  = []byte(KindStarted)
)

// isAttemptLine reports whether an entry line is a proposal, a verdict or
// a verdict's start.
func isAttemptLine(line []byte) bool {
	k := pathSegment(linePath(line), 1)
	return bytes.Equal(k, proposalSeg) || bytes.Equal(k, verdictSeg) || bytes.Equal(k, startedSeg)
}

// Row is one entry as `hone ledger list` prints it: its identity and
// attempt fields and, for a proposal, the latest verdict on its patch.
type Row struct {
	ID         string    `json:"id"`
	Kind       Kind      `json:"kind"`
	Target     string    `json:"target"`
	Created    time.Time `json:"created"`
	PatchID    string    `json:"patch_id,omitempty"`
	Commit     string    `json:"commit,omitempty"`
	AttemptKey string    `json:"attempt_key,omitempty"`
	Hotspot    string    `json:"hotspot,omitempty"`
	Class      int       `json:"class,omitempty"`
	Hypothesis string    `json:"hypothesis,omitempty"`
	// Verdict is the entry's own verdict word for a verdict entry, and the
	// latest verdict on the patch for a proposal ("" while none exists);
	// VerdictID, Summary, Speedup, Signer and Trusted are that verdict's.
	Verdict   string  `json:"verdict,omitempty"`
	VerdictID string  `json:"verdict_id,omitempty"`
	Summary   string  `json:"summary,omitempty"`
	Path      string  `json:"path"`
	Pin       string  `json:"pin,omitempty"`
	Speedup   float64 `json:"speedup,omitempty"`
	// Flags and RunnerClass are that verdict's too.
	Flags       []string `json:"flags,omitempty"`
	RunnerClass string   `json:"runner_class,omitempty"`
	Signer      string   `json:"signer,omitempty"`
	Trusted     *bool    `json:"trusted,omitempty"`
	// AddedBy is the ledger commit that added the entry itself.
	AddedBy string `json:"added_by,omitempty"`
}

// Rows lists the entries f selects, oldest first, each proposal joined with
// the latest verdict of its attempt. Only the matching rows and the
// attempts they name are parsed.
func (l *Ledger) Rows(ctx context.Context, f Filter) ([]Row, error) {
	g, err := l.gather(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]Row, 0, len(g.rows))
	for _, r := range g.rows {
		row := Row{ID: r.ID, Kind: Kind(r.Kind), Target: r.Target, Created: time.Unix(0, r.Created).UTC(),
			PatchID: r.PatchID, Commit: r.Commit, AttemptKey: r.AttemptKey, Hotspot: r.Hotspot, Class: r.Class,
			Hypothesis: r.Hypothesis, Verdict: r.Verdict, Summary: r.Summary, Path: r.Path, Pin: r.Pin, Speedup: r.Speedup,
			Flags: r.Flags, RunnerClass: r.RunnerClass}
		if !r.AddedBy.IsZero() {
			row.AddedBy = r.AddedBy.String()
		}
		var v *Judged
		if i, ok := g.byPatch[r.PatchID]; ok {
			a := &g.attempts[i]
			switch row.Kind {
			case KindProposal:
				v = a.Latest()
			case KindVerdict, KindStarted:
				for j := range a.Verdicts {
					if a.Verdicts[j].ID == r.ID {
						v = &a.Verdicts[j]
					}
				}
			}
		}
		if v != nil {
			trusted := v.Trusted
			row.Verdict, row.VerdictID, row.Summary, row.Speedup = v.Verdict, v.ID, v.Summary, v.Speedup
			row.Flags, row.RunnerClass = v.Flags, v.RunnerClass
			row.Signer, row.Trusted = v.Signer, &trusted
		}
		out = append(out, row)
	}
	return out, nil
}
