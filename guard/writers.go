package guard

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
)

// pushers is whom the server authenticated for this push, read from the
// variable [guard] pusher names.
func (p *Policy) pushers(ctx context.Context) (*ledger.Pushers, error) {
	dir, err := git.Output(ctx, p.Dir(), "rev-parse", "--git-dir")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Dir(), dir)
	}
	return ledger.NewPushers(dir, p.base.Config.Guard.Pusher), nil
}

// BindWriters records, once a push passed every check, the identity the
// server authenticated as the owner of each inbox the push wrote that has
// no owner yet (see ledger.Pushers), and as the pusher of each proposal
// the push brings (see ledger.RecordPushers).
func (p *Policy) BindWriters(ctx context.Context, updates []RefUpdate) error {
	if p.base.Config.Guard.Pusher == "" {
		return nil
	}
	ps, err := p.pushers(ctx)
	if err != nil {
		return err
	}
	ups := make([]ledger.Update, len(updates))
	for i, u := range updates {
		ups[i] = ledger.Update{Ref: u.Ref, Old: hashOf(u.Old), New: hashOf(u.New)}
	}
	if err := ps.Bind(ledger.InboxWriters(ups)); err != nil {
		return err
	}
	return ledger.RecordPushers(ctx, p.repo.Store("hone: pushers"), "refs/heads/"+p.base.Config.Ledger.Branch, ps.Name, ups, time.Now())
}

// retirements judges the pushed refs/hone/retired/<writer> refs: each is
// created once, never moved or deleted, by a commit a key the [guard]
// maintainers file lists at the protected base signed. It returns the
// writers whose retirement stands, whose inboxes the push may delete.
func (rc *Receive) retirements(ctx context.Context) (map[string]bool, []Violation, error) {
	out := map[string]bool{}
	var vs []Violation
	for _, u := range rc.Updates {
		w, ok := strings.CutPrefix(u.Ref, ledger.RetiredRefPrefix)
		if !ok {
			continue
		}
		refuse := func(format string, args ...any) {
			vs = append(vs, Violation{Ref: u.Ref, Rule: fmt.Sprintf(format, args...)})
		}
		switch {
		case strings.Contains(w, "/") || w == "":
			refuse("a retirement is %s<writer-id>", ledger.RetiredRefPrefix)
			continue
		case !isZero(u.Old):
			refuse("a retirement is written once and never moved or deleted")
			continue
		}
		keys, err := rc.maintainers(ctx, rc.base.Commit)
		if err != nil {
			return nil, nil, err
		}
		if why := keys.refuses(ctx, rc.Dir(), u.New); why != "" {
			refuse("only a maintainer retires an inbox: %s", strings.SplitN(why, ";", 2)[0])
			continue
		}
		out[w] = true
	}
	return out, vs, nil
}

// honeNamespaces are the refs under refs/hone/ a server holds; anything
// else there is refused, so nothing a hone reads can appear under a name
// no rule guards.
var honeNamespaces = []string{ledger.PatchRefPrefix, ledger.InboxRefPrefix, ledger.ClaimRefPrefix, ledger.RunnerRefPrefix, ledger.RetiredRefPrefix}

// checkHoneRefs refuses a ref under refs/hone/ outside honeNamespaces
// (deleting one is let through: it only cleans up).
func checkHoneRefs(_ context.Context, rc *Receive) ([]Violation, error) {
	var vs []Violation
	for _, u := range rc.Updates {
		if !strings.HasPrefix(u.Ref, "refs/hone/") || isZero(u.New) {
			continue
		}
		known := false
		for _, ns := range honeNamespaces {
			known = known || strings.HasPrefix(u.Ref, ns)
		}
		if !known {
			vs = append(vs, Violation{Ref: u.Ref, Rule: "a server holds only " + strings.Join(honeNamespaces, "*, ") + "* under refs/hone/"})
		}
	}
	return vs, nil
}
