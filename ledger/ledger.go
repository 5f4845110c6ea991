// Package ledger is hone's append-only history of proposals, verdicts, profiles
// and calibrations, kept in git: one immutable TOML file per entry on a
// dedicated branch that hone never checks out, plus a one-line git note per
// verdict on the patch commit. See FORMAT.md for reading it with plain git.
package ledger

import (
	"context"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/workspace"
)

// Stored is an entry as read back from the ledger branch.
type Stored struct {
	Common
	Path string `json:"path"` // path of the TOML file on the ledger branch
	Raw  []byte `json:"-"`    // the file exactly as stored
}

// Decode fills into (a struct embedding Common) from the stored TOML.
func (s *Stored) Decode(into Record) error {
	return errs.Failuref("ledger: Decode not implemented")
}

// Filter selects entries; zero fields match everything.
type Filter struct {
	Target string
	Kind   Kind
}

// Ledger reads and appends entries of one workspace.
type Ledger struct {
	ws  *workspace.Workspace
	now func() time.Time
}

// Open returns the ledger of ws. It does not touch git; a ledger whose branch
// does not exist yet is empty.
func Open(ws *workspace.Workspace) *Ledger { return &Ledger{ws: ws, now: time.Now} }

// Init creates the ledger branch with a first commit holding a README, unless
// it exists. It reports whether it created the branch.
func (l *Ledger) Init(ctx context.Context) (bool, error) {
	return false, errs.Failuref("ledger: Init not implemented")
}

// Append writes rec (and its attachments) as one new entry in one commit and
// returns it as stored. It sets Schema, ID and Created when they are empty. A
// verdict entry also gets its one-line note on the patch commit.
func (l *Ledger) Append(ctx context.Context, rec Record, att ...Attachment) (*Stored, error) {
	return nil, errs.Failuref("ledger: Append not implemented")
}

// List returns matching entries in time order (oldest first).
func (l *Ledger) List(ctx context.Context, f Filter) ([]*Stored, error) {
	return nil, errs.Failuref("ledger: List not implemented")
}

// Get returns the entry with the given id, or a NotFound error.
func (l *Ledger) Get(ctx context.Context, id string) (*Stored, error) {
	return nil, errs.Failuref("ledger: Get not implemented")
}

// ByPatch returns every entry recorded for a patch id, oldest first.
func (l *Ledger) ByPatch(ctx context.Context, patchID string) ([]*Stored, error) {
	return nil, errs.Failuref("ledger: ByPatch not implemented")
}

// ByAttemptKey returns every entry with the given attempt key, oldest first.
func (l *Ledger) ByAttemptKey(ctx context.Context, key string) ([]*Stored, error) {
	return nil, errs.Failuref("ledger: ByAttemptKey not implemented")
}

// Latest returns the newest entry of a kind for a target, or NotFound.
func (l *Ledger) Latest(ctx context.Context, target string, kind Kind) (*Stored, error) {
	return nil, errs.Failuref("ledger: Latest not implemented")
}

// Attachment returns the named attachment of a stored entry, or NotFound.
func (l *Ledger) Attachment(ctx context.Context, s *Stored, name string) ([]byte, error) {
	return nil, errs.Failuref("ledger: Attachment not implemented")
}
