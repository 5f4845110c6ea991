package profile

import (
	"context"

	"github.com/google/pprof/profile"

	"github.com/hone-perf/hone/internal/atomicfile"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Latest returns the newest profile of target, or a NotFound error that says
// how to take one.
func Latest(ctx context.Context, ws *workspace.Workspace, target string) (*Entry, error) {
	if _, err := ws.Target(target); err != nil {
		return nil, err
	}
	st, err := ledger.Open(ws).Latest(ctx, target, ledger.KindProfile)
	if errs.Is(err, errs.NotFound) {
		return nil, errs.NotFoundf("target %q has no profile yet; run `hone profile run %s`", target, target)
	}
	if err != nil {
		return nil, err
	}
	return decode(st)
}

// List returns every profile of target, oldest first.
func List(ctx context.Context, ws *workspace.Workspace, target string) ([]*Entry, error) {
	if _, err := ws.Target(target); err != nil {
		return nil, err
	}
	sts, err := ledger.Open(ws).List(ctx, ledger.Filter{Target: target, Kind: ledger.KindProfile})
	if err != nil {
		return nil, err
	}
	out := make([]*Entry, 0, len(sts))
	for _, st := range sts {
		e, err := decode(st)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Get returns the profile entry with the given id; an id naming another kind
// of entry is NotFound too, since it is no profile.
func Get(ctx context.Context, ws *workspace.Workspace, id string) (*Entry, error) {
	st, err := ledger.Open(ws).Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if st.Kind != ledger.KindProfile {
		return nil, errs.NotFoundf("ledger entry %s is a %s, not a profile; `hone profile list TARGET` lists profile ids", id, st.Kind)
	}
	return decode(st)
}

// Of returns the profile id of target, or target's latest when id is empty.
func Of(ctx context.Context, ws *workspace.Workspace, target, id string) (*Entry, error) {
	if id == "" {
		return Latest(ctx, ws, target)
	}
	if _, err := ws.Target(target); err != nil {
		return nil, err
	}
	e, err := Get(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	if e.Target != target {
		return nil, errs.NotFoundf("profile %s is of target %q, not %q; `hone profile list %s` lists its profiles", id, e.Target, target, target)
	}
	return e, nil
}

// Pprof returns the pprof profile stored with entry e.
func Pprof(ctx context.Context, ws *workspace.Workspace, e *Entry) (*profile.Profile, error) {
	p, _, err := storedPprof(ctx, ws, e)
	return p, err
}

// WritePprof writes the gzipped pprof stored with e to file, byte for byte
// as `hone profile run` recorded it, for `go tool pprof`. The file appears
// whole or not at all, and only once the stored bytes parse as a profile.
func WritePprof(ctx context.Context, ws *workspace.Workspace, e *Entry, file string) error {
	_, b, err := storedPprof(ctx, ws, e)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(file, b, 0o644); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", file)
	}
	return nil
}

// storedPprof reads e's attachment and parses it.
func storedPprof(ctx context.Context, ws *workspace.Workspace, e *Entry) (*profile.Profile, []byte, error) {
	l := ledger.Open(ws)
	st, err := l.Get(ctx, e.ID)
	if err != nil {
		return nil, nil, err
	}
	b, err := l.Attachment(ctx, st, AttachmentName)
	if err != nil {
		return nil, nil, err
	}
	p, err := profile.ParseData(b)
	if err != nil {
		return nil, nil, errs.Wrap(errs.Invalid, err, "the pprof stored with profile %s is corrupt", e.ID)
	}
	return p, b, nil
}

func decode(st *ledger.Stored) (*Entry, error) {
	var e Entry
	if err := st.Decode(&e); err != nil {
		return nil, err
	}
	return &e, nil
}
