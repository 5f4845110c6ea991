package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// SyncReport says what Pull or Push did.
type SyncReport struct {
	Remote        string   `json:"remote"`
	Ledger        string   `json:"ledger"` // up-to-date, created, fast-forward, merged, or absent (neither side has one)
	Notes         string   `json:"notes"`  // same words, for the notes ref
	EntriesAdded  int      `json:"entries_added"`
	PatchesAdded  int      `json:"patches_added"`
	PatchConflict []string `json:"patch_conflicts,omitempty"` // patch ids whose commit differs between the sides; the local one is kept
	// InboxesSkipped are the writers' inboxes the fold left out: each holds
	// a file the ledger (or an inbox folded before it) holds with other
	// bytes. The rest were folded.
	InboxesSkipped []SkippedInbox `json:"inboxes_skipped,omitempty"`
	Pushed         bool           `json:"pushed"`

	// Push only: what it did to the remote. RemoteLedger and RemoteNotes are
	// created, updated or up-to-date (empty when this clone has none), or
	// inbox when another writer moved the remote's branch first, so the
	// entries went to this clone's inbox only, for the next fold;
	// EntriesPushed counts the entries the remote gained and PatchesPushed
	// the patch refs it gained.
	RemoteLedger  string `json:"remote_ledger,omitempty"`
	RemoteNotes   string `json:"remote_notes,omitempty"`
	EntriesPushed int    `json:"entries_pushed"`
	PatchesPushed int    `json:"patches_pushed"`
}

// scratchPrefix is where Pull fetches a remote's refs before merging them, so
// nothing fetched is ever forced onto a live ref.
func scratchPrefix(remote string) string {
	name := remote
	if !validName(remote) || strings.HasSuffix(remote, ".lock") || strings.Contains(remote, "..") {
		sum := sha256.Sum256([]byte(remote))
		name = "url-" + hex.EncodeToString(sum[:6])
	}
	return "refs/hone/remotes/" + name + "/"
}

func (l *Ledger) git(ctx context.Context, args ...string) ([]byte, error) {
	return git.Run(ctx, git.Cmd{Dir: l.ws.Root, Args: args})
}

// remoteRefs lists the ledger branch, the notes ref, the patch refs and the
// writers' inboxes the remote has.
func (l *Ledger) remoteRefs(ctx context.Context, remote string) (map[string]plumbing.Hash, error) {
	branch, notes := l.branchRef(), l.ws.Config.Ledger.NotesRef
	out, err := l.git(ctx, "ls-remote", "--refs", remote, branch, notes, PatchRefPrefix+"*", InboxRefPrefix+"*")
	var ge *git.Error
	if errors.As(err, &ge) && (strings.Contains(ge.Stderr, "does not appear to be a git repository") || strings.Contains(ge.Stderr, "No such remote")) {
		return nil, errs.NotFoundf("no git remote %q; name a remote of `git remote -v` or a URL", remote)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the refs of remote %q", remote)
	}
	refs := map[string]plumbing.Hash{}
	for _, line := range strings.Split(string(out), "\n") {
		h, name, ok := strings.Cut(line, "\t")
		if !ok || !plumbing.IsHash(h) {
			continue
		}
		// ls-remote patterns match ref-name tails; keep the exact ones.
		_, _, inbox := ParseInboxRef(name)
		if name == branch || name == notes || strings.HasPrefix(name, PatchRefPrefix) || inbox {
			refs[name] = plumbing.NewHash(h)
		}
	}
	return refs, nil
}

// Pull fetches the remote's ledger branch, notes, patch refs and writers'
// inboxes into scratch refs and merges them into the local ones: the branch
// and every inbox ledger by tree union (the same path with different content
// aborts as an integrity error), the notes and every inbox's notes line by
// line as `git notes merge -s cat_sort_uniq` would, and patch refs the local
// side lacks. Live refs only ever move by compare-and-swap.
func (l *Ledger) Pull(ctx context.Context, remote string) (*SyncReport, error) {
	rep, _, err := l.pull(ctx, remote, true)
	return rep, err
}

// pull is Pull; without patches (a push's pull) the remote's patch refs
// are only listed, never fetched: a push needs to know which of its own
// the remote lacks, not the objects of every other agent's patch, which
// would make every push cost more as the fleet's history grows. The
// inboxes are still folded: they hold entries only (small text), and the
// notes a push sends its inbox may repeat only verdicts its ledger holds,
// which the remote's notes name from every inbox.
func (l *Ledger) pull(ctx context.Context, remote string, patches bool) (*SyncReport, map[string]plumbing.Hash, error) {
	rep := &SyncReport{Remote: remote, Ledger: "absent", Notes: "absent"}
	refs, err := l.remoteRefs(ctx, remote)
	if err != nil {
		return nil, nil, err
	}
	scratch := scratchPrefix(remote)
	specs := []string{}
	branch, notes := l.branchRef(), l.ws.Config.Ledger.NotesRef
	hasPatches, inboxes := false, map[string]plumbing.Hash{}
	for name, h := range refs {
		hasPatches = hasPatches || strings.HasPrefix(name, PatchRefPrefix)
		if _, _, ok := ParseInboxRef(name); ok {
			inboxes[name] = h
		}
	}
	if _, ok := refs[branch]; ok {
		specs = append(specs, "+"+branch+":"+scratch+"ledger")
	}
	if _, ok := refs[notes]; ok {
		specs = append(specs, "+"+notes+":"+scratch+"notes")
	}
	if hasPatches && patches {
		specs = append(specs, "+"+PatchRefPrefix+"*:"+scratch+"patches/*")
	}
	if len(inboxes) > 0 {
		specs = append(specs, "+"+InboxRefPrefix+"*:"+scratch+"inbox/*")
	}
	before, hadBefore, err := l.refs.Read(scratch + "ledger")
	if err != nil {
		return nil, nil, err
	}
	if len(specs) > 0 {
		args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote}, specs...)
		if _, err := l.git(ctx, args...); err != nil {
			return nil, nil, errs.Wrap(errs.Failure, err, "cannot fetch the ledger from remote %q", remote)
		}
	}
	if err := l.pruneInboxes(ctx, scratch, inboxes); err != nil {
		return nil, nil, err
	}
	if h, ok := refs[branch]; ok && hadBefore && h != before {
		if err := l.refuseRewrite(ctx, remote, scratch+"ledger", before, h); err != nil {
			return nil, nil, err
		}
	}
	if patches {
		if err := l.addPatchRefs(ctx, refs, rep); err != nil {
			return nil, nil, err
		}
	}
	if h, ok := refs[branch]; ok {
		if rep.Ledger, rep.EntriesAdded, err = l.mergeLedger(ctx, h); err != nil {
			return nil, nil, err
		}
	} else if _, ok, _ := l.refs.Read(branch); ok {
		rep.Ledger = "up-to-date"
	}
	if h, ok := refs[notes]; ok {
		if rep.Notes, err = l.mergeNotes(ctx, h); err != nil {
			return nil, nil, err
		}
	} else if _, ok, _ := l.refs.Read(notes); ok {
		rep.Notes = "up-to-date"
	}
	if len(inboxes) > 0 {
		before, _, _ := l.refs.Read(branch)
		n, skipped, err := l.foldInboxes(ctx, inboxes)
		if err != nil {
			return nil, nil, err
		}
		rep.EntriesAdded += n
		rep.InboxesSkipped = skipped
		if after, ok, _ := l.refs.Read(branch); ok && after != before {
			rep.Ledger = foldedWord(rep.Ledger, before.IsZero())
		}
		if _, ok, _ := l.refs.Read(notes); ok && rep.Notes == "absent" {
			rep.Notes = "created"
		}
	}
	return rep, refs, nil
}

// foldedWord is how Pull reports the branch after folding inboxes into it:
// the word for the branch alone, unless that was "absent" or "up-to-date".
func foldedWord(was string, created bool) string {
	switch {
	case created:
		return "created"
	case was == "absent" || was == "up-to-date":
		return "merged"
	}
	return was
}

// refuseRewrite stops a pull when the remote's ledger no longer contains
// what this clone fetched from it before: a remote whose history was
// rewritten is reported, its new tip is not merged, and the scratch ref is
// put back so the next pull reports it again.
func (l *Ledger) refuseRewrite(ctx context.Context, remote, scratch string, before, now plumbing.Hash) error {
	up, err := l.isAncestor(ctx, before, now)
	if err != nil || up {
		return err
	}
	if err := l.refs.CompareAndSwap(ctx, scratch, before, now); err != nil {
		return err
	}
	return errs.Invalidf("the ledger of remote %q was rewritten: its tip %s no longer contains %s, fetched from it earlier; nothing was merged. Run `hone ledger verify` in a clone that pushes there", remote, git.Short(now.String()), git.Short(before.String()))
}

// isAncestor asks git whether a is an ancestor of (or equal to) b.
func (l *Ledger) isAncestor(ctx context.Context, a, b plumbing.Hash) (bool, error) {
	_, err := l.git(ctx, "merge-base", "--is-ancestor", a.String(), b.String())
	if git.ExitCode(err) == 1 {
		return false, nil
	}
	if err != nil {
		return false, errs.Wrap(errs.Failure, err, "cannot compare ledger commits")
	}
	return true, nil
}

// mergeLedger brings remote commit r into the ledger branch. A fast-forward is
// taken only when r's tree already holds everything the local tip does;
// otherwise the result is a two-parent commit of the union of both trees.
func (l *Ledger) mergeLedger(ctx context.Context, r plumbing.Hash) (how string, added int, err error) {
	held, err := l.writeLock(ctx)
	if err != nil {
		return "", 0, err
	}
	defer held.Release()
	var next plumbing.Hash
	cur, err := repo.UpdateRef(ctx, l.refs, l.branchRef(), func(cur plumbing.Hash, ok bool) (plumbing.Hash, error) {
		next = cur
		if !ok {
			how, next = "created", r
			return next, nil
		}
		how = "up-to-date"
		if cur == r {
			return cur, nil
		}
		// A tip this branch already holds needs no merge, unless it is
		// held off the first-parent line: a fold took in another
		// writer's inbox whose offer of the branch then landed. The
		// server would never take such a branch, and this clone's
		// entries would wait in its inbox for another writer's fold; the
		// merge below (r first, nothing new in its tree) puts them back
		// in line for the next offer.
		if up, err := l.isAncestor(ctx, r, cur); err != nil {
			return cur, err
		} else if up {
			if on, err := onFirstParentLine(ctx, l.ws.Root, r, cur); err != nil || on {
				return cur, err
			}
		}
		rTree, err := l.obj.commitTree(r)
		if err != nil {
			return cur, err
		}
		curTree, err := l.obj.commitTree(cur)
		if err != nil {
			return cur, err
		}
		union, err := l.union(curTree, rTree, "")
		if err != nil {
			return cur, err
		}
		ff, err := l.isAncestor(ctx, cur, r)
		if err != nil {
			return cur, err
		}
		if ff && union == rTree {
			how, next = "fast-forward", r
			return next, nil
		}
		how = "merged"
		// The remote's tip is the first parent: the ledger's first-parent
		// history is then the order in which the remote received entries,
		// which runners queue by (see Queue) and the server enforces.
		next, err = l.obj.commit(ctx, union, []plumbing.Hash{r, cur}, "hone: merge the ledger of another clone\n", l.sig(), l.signingKey())
		return next, err
	})
	if err != nil || how == "up-to-date" {
		return how, 0, err
	}
	if err := l.advanceAnchor(ctx, cur, next); err != nil {
		return how, 0, err
	}
	added, err = l.countAdded(cur, next)
	return how, added, err
}

func (l *Ledger) countAdded(from, to plumbing.Hash) (int, error) {
	ft, err := l.obj.commitTree(from)
	if err != nil {
		return 0, err
	}
	tt, err := l.obj.commitTree(to)
	if err != nil {
		return 0, err
	}
	files, _, err := diffTrees(l.obj, ft, tt, "")
	n := 0
	for _, f := range files {
		if isEntryPath(f.path) {
			n++
		}
	}
	return n, err
}

// union returns the tree holding every file of a and b, sharing every subtree
// the two have in common. The same path with different content in the two is
// an integrity error: entries never change.
func (l *Ledger) union(a, b plumbing.Hash, prefix string) (plumbing.Hash, error) {
	if a == b || b.IsZero() {
		return a, nil
	}
	if a.IsZero() {
		return b, nil
	}
	ae, err := l.obj.tree(a)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	be, err := l.obj.tree(b)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	merged := append([]object.TreeEntry(nil), ae...)
	at := make(map[string]int, len(ae))
	for i, e := range ae {
		at[e.Name] = i
	}
	changed := false
	for _, e := range be {
		i, ok := at[e.Name]
		switch {
		case !ok:
			merged, changed = append(merged, e), true
		case merged[i].Hash == e.Hash && merged[i].Mode == e.Mode:
		case merged[i].Mode == filemode.Dir && e.Mode == filemode.Dir:
			sub, err := l.union(merged[i].Hash, e.Hash, prefix+e.Name+"/")
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if sub != merged[i].Hash {
				merged[i].Hash, changed = sub, true
			}
		default:
			return plumbing.ZeroHash, &pathConflict{path: prefix + e.Name}
		}
	}
	if !changed {
		return a, nil
	}
	return l.obj.writeTree(merged)
}

// pathConflict is a path two ledgers hold with different content: entries
// never change, so the two cannot be merged. As an error it is Invalid.
type pathConflict struct{ path string }

func (c *pathConflict) Error() string {
	return fmt.Sprintf("ledger integrity: %s differs between the two ledgers; nothing was merged, run `hone ledger verify` on both sides", c.path)
}

func (c *pathConflict) Unwrap() error { return errs.Invalidf("%s", c.Error()) }

// addPatchRefs creates the remote's patch refs this clone lacks (they were
// fetched), read against one listing of those it holds, so a pull costs
// the patches it brings, not every patch there is. A patch ref this clone
// holds at another commit is reported, never moved.
func (l *Ledger) addPatchRefs(ctx context.Context, remote map[string]plumbing.Hash, rep *SyncReport) error {
	out, err := l.git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", PatchRefPrefix)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot list the patch refs")
	}
	local := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if h, ref, ok := strings.Cut(line, " "); ok {
			local[ref] = h
		}
	}
	var missing []string
	for name := range remote {
		if _, have := local[name]; !have && strings.HasPrefix(name, PatchRefPrefix) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 1 {
		// One transaction of creations, as a fresh clone meets a
		// thousand: a lock, fsync and rename each, one at a time, took
		// seconds. It creates all or none; on any ref created meanwhile,
		// the one-by-one loop below decides each.
		var in strings.Builder
		for _, name := range missing {
			fmt.Fprintf(&in, "create %s %s\n", name, remote[name])
		}
		if _, err := git.Run(ctx, git.Cmd{Dir: l.ws.Root, Args: []string{"update-ref", "--stdin", "-m", "hone: ledger pull"}, Stdin: strings.NewReader(in.String())}); err == nil {
			rep.PatchesAdded += len(missing)
			for _, name := range missing {
				local[name] = remote[name].String()
			}
		}
	}
	for name, h := range remote {
		id, ok := strings.CutPrefix(name, PatchRefPrefix)
		if !ok || local[name] == h.String() {
			continue
		}
		switch err := l.refs.CompareAndSwap(ctx, name, h, plumbing.ZeroHash); {
		case err == nil:
			rep.PatchesAdded++
		case errors.Is(err, repo.ErrRaceLost):
			if cur, _, _ := l.refs.Read(name); cur != h {
				rep.PatchConflict = append(rep.PatchConflict, id)
			}
		default:
			return err
		}
	}
	return nil
}

// pruneInboxes deletes the scratch copies of inboxes the remote no longer
// has (a maintainer retired them), so that verify and the next fold look
// only at what the remote holds.
func (l *Ledger) pruneInboxes(ctx context.Context, scratch string, remote map[string]plumbing.Hash) error {
	out, err := l.git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", scratch+"inbox/")
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot list the fetched inboxes")
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		h, ref, ok := strings.Cut(line, " ")
		if !ok || !plumbing.IsHash(h) {
			continue
		}
		if _, still := remote["refs/hone/"+strings.TrimPrefix(ref, scratch)]; still {
			continue
		}
		if err := l.refs.Delete(ctx, ref, plumbing.NewHash(h)); err != nil && !errors.Is(err, repo.ErrRaceLost) {
			return err
		}
	}
	return nil
}
