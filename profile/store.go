package profile

import (
	"context"

	"github.com/google/pprof/profile"

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

// Pprof returns the pprof profile stored with entry e.
func Pprof(ctx context.Context, ws *workspace.Workspace, e *Entry) (*profile.Profile, error) {
	l := ledger.Open(ws)
	st, err := l.Get(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	b, err := l.Attachment(ctx, st, AttachmentName)
	if err != nil {
		return nil, err
	}
	p, err := profile.ParseData(b)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "the pprof stored with profile %s is corrupt", e.ID)
	}
	return p, nil
}

func decode(st *ledger.Stored) (*Entry, error) {
	var e Entry
	if err := st.Decode(&e); err != nil {
		return nil, err
	}
	return &e, nil
}
