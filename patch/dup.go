package patch

import (
	"context"
	"errors"
	"fmt"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// The anti-double-attempt rule. An idea judged at a pin may not be tried
// again there, whether it comes back under the same words (its attempt
// key) or as the same code in other words (its normalised diff). "The same
// pin" is what a verdict would see: the same tree of the target and the
// same hone.toml, not the same branch name, so an idea may be tried again
// once either has moved on (a maintainer fixed the test that rejected it),
// and the new proposal links the earlier verdict.

// earlier is a judged attempt of the target, as the rule sees it.
type earlier struct {
	attempt *ledger.Attempt
	outcome *ledger.Judged
	samePin bool
	norm    string // its normalised diff, computed on first need
}

// pinKeys computes "the same pin" keys: the target's tree and hone.toml's
// blob at a commit, remembered per commit.
type pinKeys struct {
	ws   *workspace.Workspace
	path string
	seen map[string]string
}

func (k *pinKeys) of(commit string) string {
	if v, ok := k.seen[commit]; ok {
		return v
	}
	v := ""
	st := k.ws.Store("")
	if c, err := st.ReadCommit(repo.NewHash(commit)); err == nil {
		tree := "none"
		if sub, err := repo.EntryAt(st, c.Tree, k.path); err == nil && sub.Mode == repo.ModeDir {
			tree = sub.Hash.String()
		}
		cfg := "none"
		if f, err := repo.EntryAt(st, c.Tree, workspace.FileName); err == nil && f.Mode.IsFile() {
			cfg = f.Hash.String()
		}
		v = tree + " " + cfg
	}
	k.seen[commit] = v
	return v
}

// judgedAttempts lists the target's attempts that have a trusted outcome
// (an error, which blames the environment, does not count), marking those
// at the same pin as pin.
func judgedAttempts(ctx context.Context, ws *workspace.Workspace, l *ledger.Ledger, target, path, pin string) ([]*earlier, error) {
	attempts, err := l.Attempts(ctx, ledger.Filter{Target: target})
	if err != nil {
		return nil, err
	}
	keys := &pinKeys{ws: ws, path: path, seen: map[string]string{}}
	mine := keys.of(pin)
	var out []*earlier
	for i := range attempts {
		a := &attempts[i]
		o := a.Outcome()
		if o == nil || o.Verdict == ledger.VerdictError || a.Pin == "" {
			continue
		}
		out = append(out, &earlier{attempt: a, outcome: o, samePin: mine != "" && keys.of(a.Pin) == mine})
	}
	return out, nil
}

// refuseSameWords refuses an attempt key judged at the same pin, and
// returns the newest judged one at another pin for the new entry to link.
func refuseSameWords(judged []*earlier, key string) (retries string, err error) {
	for _, e := range judged {
		if e.attempt.AttemptKey != key {
			continue
		}
		if e.samePin {
			return "", errs.Policyf("refused: this attempt (same target, hotspot, class and hypothesis) already has a verdict at this pin: entry %s on patch %s is %s; try a different idea",
				e.outcome.ID, e.attempt.PatchID, e.outcome.Verdict)
		}
		retries = e.outcome.ID
	}
	return retries, nil
}

// refuseSameCode refuses a patch whose normalised diff equals that of a
// patch judged at the same pin, whatever its words, and returns the newest
// judged one at another pin for the new entry to link.
func refuseSameCode(ctx context.Context, ws *workspace.Workspace, judged []*earlier, norm, patchID string) (retries string, err error) {
	for _, e := range judged {
		if e.attempt.PatchID == patchID && !e.samePin {
			continue
		}
		if e.norm == "" {
			if e.norm, err = storedNormalized(ctx, ws, e.attempt.Pin, e.attempt.Commit); err != nil {
				return "", err
			}
		}
		if e.norm != norm {
			continue
		}
		if e.samePin {
			return "", errs.Policyf("refused: a duplicate attempt: the diff is, but for comments, whitespace and the names of its new identifiers, the one of patch %s (%q), already judged at this pin: entry %s is %s; try a different idea",
				e.attempt.PatchID, errs.Clip(e.attempt.Hypothesis), e.outcome.ID, e.outcome.Verdict)
		}
		retries = e.outcome.ID
	}
	return retries, nil
}

// storedNormalized is the normalised diff of a stored patch commit against
// its pin.
func storedNormalized(ctx context.Context, ws *workspace.Workspace, pin, commit string) (string, error) {
	if pin == "" || commit == "" {
		return "", nil
	}
	// A push's pull folds other writers' entries but not their patch
	// commits, so a judged patch may be one this clone never fetched: it
	// cannot be compared here (hone ledger pull brings it), and must not
	// stop the proposal; its attempt key still counts.
	if _, err := ws.Store("").ReadCommit(repo.NewHash(commit)); errors.Is(err, repo.ErrNoObject) {
		return "", nil
	}
	changes, err := diffTrees(ctx, func(ctx context.Context, args ...string) ([]byte, error) {
		return git.Run(ctx, git.Cmd{Dir: ws.Root, Isolated: true, Args: args})
	}, pin, commit)
	if err != nil {
		return "", err
	}
	return normalizedOf(ws, pin, changes, func(hash string) ([]byte, error) { return readBlob(ws, hash) })
}

// normalizedOf computes the normalised diff of changes against pin, reading
// new contents with read.
func normalizedOf(ws *workspace.Workspace, pin string, changes []git.Change, read func(hash string) ([]byte, error)) (string, error) {
	st := ws.Store("")
	c, err := st.ReadCommit(repo.NewHash(pin))
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot read the pin %s", git.Short(pin))
	}
	var out []sourceChange
	for _, ch := range changes {
		sc := sourceChange{path: ch.Path, mode: ch.NewMode}
		if ch.Status != "D" && !ch.Binary {
			if sc.content, err = read(ch.Hash); err != nil {
				return "", err
			}
		}
		if f, err := repo.EntryAt(st, c.Tree, ch.Path); err == nil && f.Mode.IsFile() {
			if old, err := st.ReadObject(repo.BlobObject, f.Hash); err == nil {
				sc.before = identifiers(ch.Path, clipNormalized(old))
			}
		} else if err != nil && !errors.Is(err, repo.ErrNoEntry) {
			return "", errs.Wrap(errs.Failure, err, "cannot read %s at the pin", ch.Path)
		}
		out = append(out, sc)
	}
	return normalizedSHA256(out), nil
}

// maxNormalized bounds what is read of one file for the comparison; the
// diff's own size limit bounds what a patch can add.
const maxNormalized = 8 << 20

func readBlob(ws *workspace.Workspace, hash string) ([]byte, error) {
	b, err := ws.Store("").ReadObject(repo.BlobObject, repo.NewHash(hash))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read blob %s", git.Short(hash))
	}
	return clipNormalized(b), nil
}

// clipNormalized keeps what the comparison reads of one file.
func clipNormalized(b []byte) []byte { return b[:min(len(b), maxNormalized)] }

// retriesNote is the warning of a proposal that tries again, at a new pin,
// an idea judged at an earlier one.
func retriesNote(id string) errs.Warning {
	return errs.Warning{Code: "retried_idea", Message: fmt.Sprintf("the same idea was judged at an earlier pin (entry %s); the pin has moved since, so it may be tried again, and this proposal links that verdict", id)}
}
