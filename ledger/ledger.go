// Package ledger is hone's append-only history of proposals, verdicts, profiles
// and calibrations, kept in git: one immutable TOML file per entry on a
// dedicated branch that hone never checks out, plus a one-line git note per
// verdict on the patch commit. See FORMAT.md for reading it with plain git.
package ledger

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/workspace"
)

// Stored is an entry as read back from the ledger branch.
type Stored struct {
	Common
	Path string `json:"path"` // path of the TOML file on the ledger branch
	Raw  []byte `json:"-"`    // the file exactly as stored
	// AddedBy is the ledger commit that added the entry; zero when it was
	// not read through the index.
	AddedBy plumbing.Hash `json:"-"`
}

// Signer is who signed the ledger commit that added s, judged by the
// protected base's allowed signers.
func (l *Ledger) Signer(ctx context.Context, s *Stored) (Signer, error) {
	return l.signerOf(ctx, s.AddedBy)
}

// Filter selects entries; zero fields match everything.
type Filter struct {
	Target     string
	Kind       Kind
	PatchID    string
	AttemptKey string
}

func (f Filter) match(r *row) bool {
	return (f.Target == "" || r.Target == f.Target) && (f.Kind == "" || r.Kind == string(f.Kind)) &&
		(f.PatchID == "" || r.PatchID == f.PatchID) && (f.AttemptKey == "" || r.AttemptKey == f.AttemptKey)
}

// keep returns a test on entry lines that every match passes and that
// reads only the leading fields, so most lines are never parsed; nil when
// the filter names no such field.
func (f Filter) keep() func([]byte) bool {
	var tests []func([]byte) bool
	is := func(n int, v string) {
		want := []byte(esc(v))
		tests = append(tests, func(line []byte) bool { return bytes.Equal(field(line, n), want) })
	}
	if f.AttemptKey != "" {
		is(fieldAttemptKey, f.AttemptKey)
	}
	if f.PatchID != "" {
		is(fieldPatchID, f.PatchID)
	}
	if f.Target != "" || f.Kind != "" {
		target, kind := []byte(f.Target), []byte(f.Kind)
		tests = append(tests, func(line []byte) bool {
			p := linePath(line)
			return (len(target) == 0 || bytes.Equal(pathSegment(p, 0), target)) && (len(kind) == 0 || bytes.Equal(pathSegment(p, 1), kind))
		})
	}
	if len(tests) == 0 {
		return nil
	}
	return func(line []byte) bool {
		for _, t := range tests {
			if !t(line) {
				return false
			}
		}
		return true
	}
}

// Ledger reads and appends entries of one workspace.
type Ledger struct {
	ws   *workspace.Workspace
	now  func() time.Time
	refs repo.Store // the ledger's seam to git; obj reads and writes through it
	obj  objects

	mu sync.Mutex // guards ix
	ix *index     // the index of the last tip seen, reused while the tip stays

	keyOnce sync.Once
	key     string // hone.signingkey; "" signs nothing

	trustOnce sync.Once
	tr        *Trust
	trErr     error

	sigs *sigCache // loaded on first use; views run on one goroutine
}

// Open returns the ledger of ws. It does not touch git; a ledger whose branch
// does not exist yet is empty.
func Open(ws *workspace.Workspace) *Ledger {
	st := ws.Store("hone: ledger")
	return &Ledger{
		refs: st,
		obj:  newObjects(st),
		ws:   ws,
		now:  time.Now,
	}
}

func (l *Ledger) honeDir() string { return l.ws.StatePath() }

// query returns the index rows matching f in time order.
func (l *Ledger) query(ctx context.Context, f Filter) ([]row, error) {
	var out []row
	err := l.scan(ctx, f.keep(), func(int) { out = nil }, func(r *row) bool {
		if f.match(r) {
			out = append(out, *r)
		}
		return true
	})
	sorted := byTime(out, nil)
	rows := make([]row, len(sorted))
	for i, r := range sorted {
		rows[i] = *r
	}
	return rows, err
}

// scan calls fn with the index rows whose line passes keep, in path order,
// after bringing the cache up to date. A cache that turns out corrupt while
// being read is dropped and rebuilt once, and the rows are seen again from
// the start: begin runs before each pass, with the index's line count (a
// bound on the rows), so callers can reset and size what they collect.
func (l *Ledger) scan(ctx context.Context, keep func([]byte) bool, begin func(lines int), fn func(*row) bool) error {
	if err := os.MkdirAll(l.honeDir(), 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", l.honeDir())
	}
	for attempt := 0; ; attempt++ {
		ix, err := l.index(ctx)
		if err != nil {
			return err
		}
		begin(ix.count())
		err = ix.each(keep, fn)
		if errors.Is(err, errCorruptIndex) && attempt == 0 {
			l.mu.Lock()
			l.ix = nil
			l.mu.Unlock()
			os.Remove(l.indexPath())
			continue
		}
		if err != nil {
			return errs.Wrap(errs.Failure, err, "ledger: cannot read %s", l.indexPath())
		}
		return nil
	}
}

// load reads the entries behind rows from the object store.
func (l *Ledger) load(rows []row) ([]*Stored, error) {
	out := make([]*Stored, 0, len(rows))
	for _, r := range rows {
		raw, err := l.obj.readBlob(r.Blob)
		if err != nil {
			return nil, err
		}
		s, err := parseStored(r.Path, raw)
		if err != nil {
			return nil, err
		}
		s.AddedBy = r.AddedBy
		out = append(out, s)
	}
	return out, nil
}

// List returns matching entries in time order (oldest first).
func (l *Ledger) List(ctx context.Context, f Filter) ([]*Stored, error) {
	rows, err := l.query(ctx, f)
	if err != nil {
		return nil, err
	}
	return l.load(rows)
}

// Get returns the entry with the given id, or with the id that prefix
// abbreviates (see ResolveEntry), or a NotFound error.
func (l *Ledger) Get(ctx context.Context, id string) (*Stored, error) {
	if !validID(id) {
		full, err := l.ResolveEntry(ctx, id)
		if err != nil {
			return nil, err
		}
		id = full
	}
	want := []byte(id)
	var rows []row
	err := l.scan(ctx, func(line []byte) bool { return bytes.Equal(lineID(line), want) }, func(int) {}, func(r *row) bool {
		rows = append(rows[:0], *r)
		return false
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errs.NotFoundf("no ledger entry %s; see `hone ledger list`", id)
	}
	s, err := l.load(rows[:1])
	if err != nil {
		return nil, err
	}
	return s[0], nil
}

// ByPatch returns every entry recorded for a patch id, oldest first.
func (l *Ledger) ByPatch(ctx context.Context, patchID string) ([]*Stored, error) {
	if patchID == "" {
		return nil, nil
	}
	return l.List(ctx, Filter{PatchID: patchID})
}

// Latest returns the newest entry of a kind for a target, or NotFound.
func (l *Ledger) Latest(ctx context.Context, target string, kind Kind) (*Stored, error) {
	rows, err := l.query(ctx, Filter{Target: target, Kind: kind})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errs.NotFoundf("the ledger has no %s entry for target %q", kind, target)
	}
	s, err := l.load(rows[len(rows)-1:])
	if err != nil {
		return nil, err
	}
	return s[0], nil
}

// Attachment returns the named attachment of a stored entry, or NotFound.
func (l *Ledger) Attachment(ctx context.Context, s *Stored, name string) ([]byte, error) {
	tip, ok, err := l.refs.Read(l.branchRef())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.NotFoundf("no attachment %q of entry %s: the ledger is empty", name, s.ID)
	}
	tree, err := l.obj.commitTree(tip)
	if err != nil {
		return nil, err
	}
	p := path.Join(path.Dir(s.Path), s.ID+"."+name)
	h, found, err := lookupIn(l.obj, tree, p)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errs.NotFoundf("entry %s has no attachment %q (no %s on %s)", s.ID, name, p, l.ws.Config.Ledger.Branch)
	}
	return l.obj.readBlob(h)
}

// Attachments lists the names of the attachments stored beside an entry.
func (l *Ledger) Attachments(ctx context.Context, s *Stored) ([]string, error) {
	tip, ok, err := l.refs.Read(l.branchRef())
	if err != nil || !ok {
		return nil, err
	}
	tree, err := l.obj.commitTree(tip)
	if err != nil {
		return nil, err
	}
	dir, found, err := lookupIn(l.obj, tree, path.Dir(s.Path))
	if err != nil || !found {
		return nil, err
	}
	entries, err := l.obj.tree(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutPrefix(e.Name, s.ID+"."); ok && name != "toml" {
			names = append(names, name)
		}
	}
	return names, nil
}
