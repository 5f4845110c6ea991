package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// mergeNotes brings remote notes commit r into the notes ref: notes only one
// side has are taken as they are, and notes both sides have become the sorted
// union of their lines (cat_sort_uniq), in a two-parent commit.
func (l *Ledger) mergeNotes(ctx context.Context, r plumbing.Hash) (how string, err error) {
	_, err = repo.UpdateRef(ctx, l.refs, l.ws.Config.Ledger.NotesRef, func(cur plumbing.Hash, ok bool) (plumbing.Hash, error) {
		if !ok {
			how = "created"
			return r, nil
		}
		how = "up-to-date"
		if cur == r {
			return cur, nil
		}
		if up, err := l.isAncestor(ctx, r, cur); err != nil || up {
			return cur, err
		}
		ff, err := l.isAncestor(ctx, cur, r)
		if err != nil {
			return cur, err
		}
		if ff {
			how = "fast-forward"
			return r, nil
		}
		how = "merged"
		return l.notesMergeCommit(ctx, cur, r)
	})
	if err != nil {
		return "", err
	}
	return how, nil
}

func (l *Ledger) notesMergeCommit(ctx context.Context, cur, r plumbing.Hash) (plumbing.Hash, error) {
	curTree, err := l.obj.commitTree(cur)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	rTree, err := l.obj.commitTree(r)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	mine, err := l.readNotes(curTree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	theirs, err := l.readNotes(rTree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var files []file
	for obj, t := range theirs {
		m, ok := mine[obj]
		switch {
		case !ok:
			p, _, _, err := l.findNote(curTree, obj)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			files = append(files, file{path: p, hash: t.blob})
		case m.blob != t.blob:
			a, err := l.obj.readBlob(m.blob)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			b, err := l.obj.readBlob(t.blob)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			h, err := l.obj.writeBlob([]byte(unionNote(string(a), string(b))))
			if err != nil {
				return plumbing.ZeroHash, err
			}
			files = append(files, file{path: m.path, hash: h, replace: true})
		}
	}
	tree, err := l.obj.insert(curTree, files)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return l.obj.commit(ctx, tree, []plumbing.Hash{cur, r}, "hone: merge the notes of another clone\n", l.sig(), "")
}

// DefaultPushTimeout bounds Push when ctx has no deadline of its own.
const DefaultPushTimeout = 60 * time.Second

// Push shares the local ledger with a remote: it pulls first (folding every
// writer's inbox in, but fetching no patch, see pull), then pushes the branch and the notes to this clone's
// own inbox refs (see InboxRefPrefix) with the patch refs the remote lacks,
// and offers the folded branch and notes to the remote's own refs in the
// same push, never forcing. Only this clone moves its inbox, so many
// writers at once do not fight over one ref: the offer of the branch lands
// when it is a fast-forward and is simply left to the next writer when it is
// not. A push of the inbox that loses a race (another process of this same
// clone, or a patch ref another clone created first) pulls and tries again,
// after a growing, jittered pause, until ctx's deadline (DefaultPushTimeout
// when it has none); then it reports Busy. A push the remote's hooks refuse
// is a Policy error carrying the remote's reasons, and is not retried.
//
// The deadline bounds the retrying, not one attempt's work: on a loaded
// machine a pull and push that make progress may take longer than it, and
// cutting them short would give up on a push nothing contended. Cancelling
// ctx (Ctrl-C) still stops an attempt at once.
func (l *Ledger) Push(ctx context.Context, remote string) (*SyncReport, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultPushTimeout)
	}
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	defer context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			stop()
		}
	})()
	retry, cancel := context.WithDeadline(work, deadline)
	defer cancel()
	var lastErr error
	for n := 1; ; n++ {
		rep, done, err := l.pushOnce(work, remote)
		if err != nil {
			return nil, err
		}
		if done {
			return rep.SyncReport, nil
		}
		lastErr = rep.err
		if !backoff(retry, n) {
			return nil, errs.Wrap(errs.Busy, lastErr, "remote %q kept moving while pushing the ledger (%d tries); try again later or with a longer --timeout", remote, n)
		}
	}
}

// pushReport is a SyncReport with why a push attempt lost its race.
type pushReport struct {
	*SyncReport
	err error
}

// refState says how a local ref stands against the remote's copy: "" when
// there is no local ref, else up-to-date, created or updated.
func refState(local plumbing.Hash, ok bool, remote plumbing.Hash, had bool) string {
	switch {
	case !ok:
		return ""
	case had && remote == local:
		return "up-to-date"
	case !had:
		return "created"
	}
	return "updated"
}

// pushOnce pulls, then pushes. done is false when the inbox or a patch ref
// lost a race and the caller should try again.
func (l *Ledger) pushOnce(ctx context.Context, remote string) (rep *pushReport, done bool, err error) {
	sr, theirs, err := l.pull(ctx, remote, false)
	if err != nil {
		return nil, true, err
	}
	rep = &pushReport{SyncReport: sr}
	wid, err := l.WriterID(ctx)
	if err != nil {
		return nil, true, err
	}
	var specs, leases []string
	must := map[string]bool{} // refs whose refusal is a lost race; the others are offers
	branch, notes := l.branchRef(), l.ws.Config.Ledger.NotesRef
	pairs := []struct{ local, inbox string }{{branch, InboxLedgerRef(wid)}, {notes, InboxNotesRef(wid)}}
	inboxMoves := false
	for _, p := range pairs {
		h, ok, err := l.refs.Read(p.local)
		if err != nil {
			return nil, true, err
		}
		switch {
		case p.local == branch && ok:
			if h, err = l.publishable(ctx, h, theirs[branch], theirs[p.inbox]); err != nil {
				return nil, true, err
			}
		case ok:
			tip, _, err := l.refs.Read(branch)
			if err != nil {
				return nil, true, err
			}
			if h, err = l.publishableNotes(ctx, h, tip, theirs[p.local], theirs[p.inbox]); err != nil {
				return nil, true, err
			}
		}
		// The inbox carries what the remote's branch lacks: a ledger the
		// branch already holds has nothing to deliver (and may be another
		// writer's commit, which a runner's inbox would not take), and the
		// notes go with the ledger (a runner's inbox takes its notes only
		// with a ledger its key signed), else in the offer below.
		deliver := true
		if p.local == branch && ok {
			if rb, had := theirs[branch]; had {
				held, err := l.isAncestor(ctx, h, rb)
				if err != nil {
					return nil, true, err
				}
				deliver = !held
			}
		} else if p.local != branch {
			deliver = inboxMoves
		}
		if st := refState(h, ok, theirs[p.inbox], theirs[p.inbox] != plumbing.ZeroHash); deliver && (st == "created" || st == "updated") {
			if p.local == branch {
				inboxMoves = true
			}
			specs = append(specs, h.String()+":"+p.inbox)
			must[p.inbox] = true
			if p.local == branch {
				base, had := theirs[p.inbox]
				if !had {
					base = theirs[branch]
				}
				if sr.EntriesPushed, err = l.entriesGained(base, h); err != nil {
					return nil, true, err
				}
			}
		}
		prev, had := theirs[p.local]
		st := refState(h, ok, prev, had)
		if (st == "created" || st == "updated") && (p.local != branch || !had || l.keepsFirstParent(ctx, prev, h)) {
			// The server keeps its own tip on the branch's first-parent
			// line (the order entries arrived in) and refuses the whole
			// push otherwise; a branch that does not is left to the next
			// fold, its entries already in this clone's inbox. The offer
			// holds only while the remote is still where the pull saw
			// it: another writer's offer landing in between can be a
			// commit this pull folded in as a second parent, which the
			// server would refuse, and with it the whole push.
			specs = append(specs, h.String()+":"+p.local)
			if p.local == branch {
				leases = append(leases, "--force-with-lease="+p.local+":"+leaseOf(prev, had))
			}
		} else if st == "updated" {
			st = "inbox"
		}
		if p.local == branch {
			sr.RemoteLedger = st
		} else {
			sr.RemoteNotes = st
		}
	}
	mine, err := l.git(ctx, "for-each-ref", "--format=%(refname)", PatchRefPrefix)
	if err != nil {
		return nil, true, errs.Wrap(errs.Failure, err, "cannot list the patch refs")
	}
	// The patch refs go first: without --atomic (the branch offer may
	// fail alone) the remote updates refs one by one in this order, and a
	// runner reading between two updates must not see a proposal whose
	// patch ref is not there yet.
	tip, _, err := l.refs.Read(branch)
	if err != nil {
		return nil, true, err
	}
	home, err := l.withdrawnPatches(tip)
	if err != nil {
		return nil, true, err
	}
	var patchSpecs []string
	for _, ref := range strings.Fields(string(mine)) {
		if _, ok := theirs[ref]; !ok && !home[strings.TrimPrefix(ref, PatchRefPrefix)] {
			patchSpecs = append(patchSpecs, ref+":"+ref)
			must[ref] = true
		}
	}
	patches := len(patchSpecs)
	specs = append(patchSpecs, specs...)
	if len(specs) == 0 {
		return rep, true, nil
	}
	args := append(append([]string{"push", "--quiet", "--porcelain"}, leases...), remote)
	out, err := l.git(ctx, append(args, specs...)...)
	var ge *git.Error
	if err != nil && !errors.As(err, &ge) {
		return nil, true, errs.Wrap(errs.Failure, err, "cannot push the ledger to remote %q", remote)
	}
	if ge != nil && serverBusy(ge.Stderr) {
		return nil, true, hookRefusal(remote, "the ledger push", ge.Stderr)
	}
	if ge != nil && (strings.Contains(ge.Stderr, "hook declined") || strings.Contains(string(out), "hook declined")) {
		// Entries of this clone the remote refuses for good are withdrawn
		// from what it publishes from now on: this push fails, the next
		// one does not carry them.
		withdrawn := ""
		if tip, ok, err := l.refs.Read(branch); err == nil && ok {
			refused, err := l.refusedEntries(ge.Stderr, tip, theirs[branch])
			if err != nil {
				return nil, true, err
			}
			already, err := l.withdrawn()
			if err != nil {
				return nil, true, err
			}
			var fresh []string
			for _, p := range refused {
				if !already[p] {
					fresh = append(fresh, p)
				}
			}
			if len(fresh) > 0 {
				if err := l.withdraw(fresh); err != nil {
					return nil, true, err
				}
				withdrawn = fmt.Sprintf("; withdrawn from later pushes (kept in this clone's ledger): %s", strings.Join(fresh, " "))
			}
		}
		return nil, true, errs.Policyf("remote %q refused the ledger push: %s%s", remote, errs.Clip(remoteReasons(ge.Stderr)), withdrawn)
	}
	refused := refusedRefs(string(out))
	if err != nil && len(refused) == 0 {
		return nil, true, errs.Wrap(errs.Failure, err, "cannot push the ledger to remote %q", remote)
	}
	for ref := range refused {
		if must[ref] {
			rep.err = errs.Busyf("remote %q did not take %s: %s", remote, ref, refused[ref])
			return rep, false, nil
		}
	}
	if refused[branch] != "" {
		sr.RemoteLedger = "inbox"
	}
	if refused[notes] != "" {
		sr.RemoteNotes = "inbox"
	}
	sr.Pushed, sr.PatchesPushed = true, patches
	if tip, ok, _ := l.refs.Read(branch); ok {
		if err := l.advanceAnchor(ctx, plumbing.ZeroHash, tip); err != nil {
			return nil, true, err
		}
	}
	return rep, true, nil
}

// leaseOf is the value --force-with-lease expects of a remote ref: the
// commit it had, or "" for none.
func leaseOf(prev plumbing.Hash, had bool) string {
	if !had {
		return ""
	}
	return prev.String()
}

// refusedRefs reads `git push --porcelain` output: the remote refs it did
// not update ("!" lines), with git's reason.
func refusedRefs(out string) map[string]string {
	refused := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 2 || f[0] != "!" {
			continue
		}
		_, dst, _ := strings.Cut(f[1], ":")
		reason := ""
		if len(f) == 3 {
			reason = f[2]
		}
		refused[dst] = reason
	}
	return refused
}

// ServerBusy starts the refusal of a server's hook that could not take its
// receive lock in time: the push was never judged, so a writer is told
// busy (retry) rather than refused, and a runner's release retries it.
const ServerBusy = "the server was checking other pushes"

// hookRefusal is the error for a push the remote's hook declined: busy
// when the hook says it could not check the push, a policy refusal
// otherwise.
func hookRefusal(remote, what, stderr string) error {
	if serverBusy(stderr) {
		return errs.Busyf("remote %q could not check %s now: %s", remote, what, errs.Clip(remoteReasons(stderr)))
	}
	return errs.Policyf("remote %q refused %s: %s", remote, what, errs.Clip(remoteReasons(stderr)))
}

// serverBusy is whether the hook's own error line (hone's "hone: "
// prefix, the whole message) says it could not check the push; a refusal
// that only quotes the words, in a path or a ref a pusher chose, is not.
func serverBusy(stderr string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(line), "remote: "); ok && strings.HasPrefix(strings.TrimSpace(r), "hone: "+ServerBusy) {
			return true
		}
	}
	return false
}

// remoteReasons keeps the lines a remote's hooks printed ("remote: ...").
func remoteReasons(stderr string) string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(line), "remote: "); ok && strings.TrimSpace(r) != "" {
			out = append(out, strings.TrimSpace(r))
		}
	}
	if len(out) == 0 {
		return strings.TrimSpace(stderr)
	}
	return strings.Join(out, "; ")
}

// backoff sleeps before try n+1 of a push that lost a race: a pause that
// doubles from 20 ms up to 2 s, drawn at random from half to all of it so
// writers that collided do not collide again in step. It reports false,
// without sleeping, when the pause would end after ctx's deadline.
func backoff(ctx context.Context, n int) bool {
	ceil := 20 * time.Millisecond << min(n-1, 7)
	ceil = min(ceil, 2*time.Second)
	wait := ceil/2 + time.Duration(rand.N(int64(ceil/2)+1))
	if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// entriesGained counts the entries of ledger commit to that ledger commit
// from (zero: none) lacks. The ledger only ever adds files, so it is the
// difference of their entry counts.
func (l *Ledger) entriesGained(from, to plumbing.Hash) (int, error) {
	count := func(c plumbing.Hash) (int, error) {
		if c.IsZero() {
			return 0, nil
		}
		tree, err := l.obj.commitTree(c)
		if err != nil {
			return 0, err
		}
		files, err := listFiles(l.obj, tree, "")
		n := 0
		for _, f := range files {
			if isEntryPath(f.path) {
				n++
			}
		}
		return n, err
	}
	a, err := count(from)
	if err != nil {
		return 0, err
	}
	b, err := count(to)
	return b - a, err
}

// keepsFirstParent reports whether prev, the remote's branch, is on the
// first-parent history of h, this clone's; an error reads as no.
func (l *Ledger) keepsFirstParent(ctx context.Context, prev, h plumbing.Hash) bool {
	on, err := onFirstParentLine(ctx, l.ws.Root, prev, h)
	return err == nil && on
}
