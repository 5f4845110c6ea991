package ledger

import (
	"bytes"
	"context"
	"time"
)

// Attempt is one row of the ledger's joined view: an entry's identity and
// attempt fields, and, for a proposal, the latest verdict on its patch. It is
// read from the index alone, so listing costs no entry parsing.
type Attempt struct {
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
	// latest verdict on the patch for a proposal ("" while none exists).
	Verdict   string `json:"verdict,omitempty"`
	VerdictID string `json:"verdict_id,omitempty"` // the verdict entry Verdict comes from
	Summary   string `json:"summary,omitempty"`
	Path      string `json:"path"`
}

// verdictLine tells a verdict row from its line alone: ids have a fixed
// length, so the kind always starts at the same column.
var verdictField = []byte("\t" + string(KindVerdict) + "\t")

func isVerdictLine(line []byte) bool {
	return len(line) > 33+len(verdictField) && bytes.Equal(line[32:32+len(verdictField)], verdictField)
}

// Attempts returns the joined view of the entries f selects, oldest first.
// Only the matching rows and the verdict rows are parsed.
func (l *Ledger) Attempts(ctx context.Context, f Filter) ([]Attempt, error) {
	type verdict struct{ word, id, summary string }
	var (
		latest map[string]verdict // patch id -> newest verdict; rows come in time order
		out    []Attempt
	)
	begin := func() { latest, out = nil, []Attempt{} }
	pre := f.prefilter()
	keep := func(line []byte) bool { return isVerdictLine(line) || pre == nil || pre(line) }
	err := l.scan(keep, begin, func(r *row) bool {
		if r.Kind == string(KindVerdict) && r.PatchID != "" {
			if latest == nil {
				latest = map[string]verdict{}
			}
			latest[r.PatchID] = verdict{r.Verdict, r.ID, r.Summary}
		}
		if !f.match(r) {
			return true
		}
		a := Attempt{ID: r.ID, Kind: Kind(r.Kind), Target: r.Target, Created: time.Unix(0, r.Created).UTC(),
			PatchID: r.PatchID, Commit: r.Commit, AttemptKey: r.AttemptKey, Hotspot: r.Hotspot, Class: r.Class,
			Hypothesis: r.Hypothesis, Verdict: r.Verdict, Summary: r.Summary, Path: r.Path}
		if r.Kind == string(KindVerdict) {
			a.VerdictID = r.ID
		}
		out = append(out, a)
		return true
	})
	if err != nil {
		return nil, err
	}
	// A verdict may come after its proposal; join once all are seen.
	for i := range out {
		if v, ok := latest[out[i].PatchID]; ok && out[i].Kind == KindProposal {
			out[i].Verdict, out[i].VerdictID, out[i].Summary = v.word, v.id, v.summary
		}
	}
	return out, nil
}
