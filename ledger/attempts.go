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
	// Pin is the commit the attempt was made from (proposals and verdicts).
	Pin string `json:"pin,omitempty"`
	// Speedup is the verdict's deciding speedup, like Verdict the latest
	// verdict's for a proposal; 0 when there is none.
	Speedup float64 `json:"speedup,omitempty"`
}

var verdictKind = []byte(KindVerdict)

func isVerdictLine(line []byte) bool { return bytes.Equal(field(line, fieldKind), verdictKind) }

// Attempts returns the joined view of the entries f selects, oldest first.
// Only the matching rows and the verdict rows they need are parsed.
func (l *Ledger) Attempts(ctx context.Context, f Filter) ([]Attempt, error) {
	type verdict struct {
		word, id, summary string
		speedup           float64
	}
	var (
		latest map[string]verdict // patch id -> newest verdict; rows come in time order
		out    []Attempt
	)
	note := func(r *row) {
		if r.Kind == string(KindVerdict) && r.PatchID != "" {
			latest[r.PatchID] = verdict{r.Verdict, r.ID, r.Summary, r.Speedup}
		}
	}
	keep := f.keep()
	// With a patch or attempt key few rows match: their verdicts are looked
	// up after. Otherwise one pass takes the matching rows and every verdict.
	selective := f.AttemptKey != "" || f.PatchID != ""
	if !selective {
		match := keep
		keep = func(line []byte) bool { return isVerdictLine(line) || match == nil || match(line) }
	}
	err := l.scan(keep, func() { latest, out = map[string]verdict{}, []Attempt{} }, func(r *row) bool {
		note(r)
		if f.match(r) {
			out = append(out, attemptOf(r))
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if selective {
		// Few rows matched: look up the verdicts of their patches alone.
		seen := map[string]bool{}
		for _, a := range out {
			if a.Kind != KindProposal || a.PatchID == "" || seen[a.PatchID] {
				continue
			}
			seen[a.PatchID] = true
			vs := Filter{PatchID: a.PatchID, Kind: KindVerdict}
			if err := l.scan(vs.keep(), func() {}, func(r *row) bool {
				if vs.match(r) {
					note(r)
				}
				return true
			}); err != nil {
				return nil, err
			}
		}
	}
	// A verdict may come after its proposal; join once all are seen.
	for i := range out {
		if v, ok := latest[out[i].PatchID]; ok && out[i].Kind == KindProposal {
			out[i].Verdict, out[i].VerdictID, out[i].Summary, out[i].Speedup = v.word, v.id, v.summary, v.speedup
		}
	}
	return out, nil
}

func attemptOf(r *row) Attempt {
	a := Attempt{ID: r.ID, Kind: Kind(r.Kind), Target: r.Target, Created: time.Unix(0, r.Created).UTC(),
		PatchID: r.PatchID, Commit: r.Commit, AttemptKey: r.AttemptKey, Hotspot: r.Hotspot, Class: r.Class,
		Hypothesis: r.Hypothesis, Verdict: r.Verdict, Summary: r.Summary, Path: r.Path,
		Pin: r.Pin, Speedup: r.Speedup}
	if r.Kind == string(KindVerdict) {
		a.VerdictID = r.ID
	}
	return a
}
