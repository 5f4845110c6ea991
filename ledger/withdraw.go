package ledger

import (
	"bufio"
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
)

// A writer's ledger can hold an entry the remote refuses for good: a
// proposal of a patch another writer proposed first, or made at a pin main
// has since moved past; a second verdict on a patch. Entries are never
// removed, so such an entry would stop every later push of the writer. It
// is withdrawn instead: kept in this clone's branch, listed in
// <git common dir>/hone/withdrawn (one path per line), and left out of
// what Push publishes, which is then the remote's branch with this clone's
// other entries added (see publishable).

// withdrawnFile is where this clone lists the entries it withdrew.
func (l *Ledger) withdrawnFile() string {
	return l.ws.StatePath("withdrawn")
}

// withdrawn reads the paths this clone withdrew.
func (l *Ledger) withdrawn() (map[string]bool, error) {
	out := map[string]bool{}
	f, err := os.Open(l.withdrawnFile())
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s", l.withdrawnFile())
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p := strings.TrimSpace(sc.Text()); p != "" {
			out[p] = true
		}
	}
	return out, sc.Err()
}

// withdraw adds paths to the withdrawn list.
func (l *Ledger) withdraw(paths []string) error {
	if err := os.MkdirAll(filepath.Dir(l.withdrawnFile()), 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", filepath.Dir(l.withdrawnFile()))
	}
	f, err := os.OpenFile(l.withdrawnFile(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot open %s", l.withdrawnFile())
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(paths, "\n") + "\n"); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", l.withdrawnFile())
	}
	return f.Sync()
}

// refusedLine is one violation a remote's hone printed about a ledger
// path: `hone guard: <ref>: "<path>": <rule>`.
var refusedLine = regexp.MustCompile(`hone guard: (\S+): "([^"]+)": `)

// refusedEntries are the entries of the local tip that the remote's hook
// refused in stderr, as printed on a ledger ref, and that the remote's
// branch does not hold: what this clone must withdraw.
func (l *Ledger) refusedEntries(stderr string, tip, remote plumbing.Hash) ([]string, error) {
	tipTree, err := l.obj.commitTree(tip)
	if err != nil {
		return nil, err
	}
	var remoteTree plumbing.Hash
	if !remote.IsZero() {
		if remoteTree, err = l.obj.commitTree(remote); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range refusedLine.FindAllStringSubmatch(stderr, -1) {
		ref, p := m[1], m[2]
		_, _, inbox := ParseInboxRef(ref)
		if (ref != l.branchRef() && !inbox) || !isEntryPath(p) || seen[p] {
			continue
		}
		seen[p] = true
		if _, mine, err := lookupIn(l.obj, tipTree, p); err != nil || !mine {
			if err != nil {
				return nil, err
			}
			continue
		}
		if !remoteTree.IsZero() {
			if _, theirs, err := lookupIn(l.obj, remoteTree, p); err != nil || theirs {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// publishable is what Push sends in place of the local tip h when this
// clone withdrew entries the tip holds: the remote's branch (rb) joined
// with this clone's inbox (in, when it is not already in rb) by a merge
// that adds nothing, then one commit adding every file of h that neither
// holds, but the withdrawn entries and their attachments. It returns h
// itself when nothing is withdrawn from it.
func (l *Ledger) publishable(ctx context.Context, h, rb, in plumbing.Hash) (pub plumbing.Hash, err error) {
	out, err := l.withdrawn()
	if err != nil || len(out) == 0 {
		return h, err
	}
	tipTree, err := l.obj.commitTree(h)
	if err != nil {
		return h, err
	}
	holds := false
	for p := range out {
		if _, ok, err := lookupIn(l.obj, tipTree, p); err != nil {
			return h, err
		} else if ok {
			holds = true
		}
	}
	if !holds {
		return h, nil
	}
	base, tree := rb, plumbing.ZeroHash
	switch {
	case rb.IsZero() && in.IsZero():
		// Nothing on the remote yet: a root commit of the rest.
	case rb.IsZero():
		base = in
		if tree, err = l.obj.commitTree(in); err != nil {
			return h, err
		}
	default:
		if tree, err = l.obj.commitTree(rb); err != nil {
			return h, err
		}
	}
	if !rb.IsZero() && !in.IsZero() {
		if up, err := l.isAncestor(ctx, in, rb); err != nil {
			return h, err
		} else if !up {
			defer func() {
				// Nothing new beyond the inbox: publish the inbox as it is,
				// rather than a new merge of it on every push.
				if pub == base && base != rb {
					pub = in
				}
			}()
			inTree, err := l.obj.commitTree(in)
			if err != nil {
				return h, err
			}
			if tree, err = l.union(tree, inTree, ""); err != nil {
				return h, err
			}
			if base, err = l.obj.commit(ctx, tree, []plumbing.Hash{rb, in}, "hone: merge this writer's inbox\n", l.sig(), l.signingKey()); err != nil {
				return h, err
			}
		}
	}
	added, _, err := diffTrees(l.obj, tree, tipTree, "")
	if err != nil {
		return h, err
	}
	var files []file
	for _, f := range added {
		dir, name := path.Split(f.path)
		id, _, _ := strings.Cut(name, ".")
		if out[f.path] || out[dir+id+".toml"] {
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return base, nil
	}
	next, err := l.obj.insert(tree, files)
	if err != nil {
		return h, err
	}
	var parents []plumbing.Hash
	if !base.IsZero() {
		parents = []plumbing.Hash{base}
	}
	return l.obj.commit(ctx, next, parents, "hone: this writer's entries, without the withdrawn ones\n", l.sig(), l.signingKey())
}

// Publishable is a ledger tip and a notes tip of this clone (zero: none)
// as this writer may push them to its inbox on remote, the way Push does:
// without the entries this clone withdrew, and their note lines, built on
// the remote's branch, notes and this writer's inbox as the last pull
// fetched them. A runner's release pushes it, so a verdict the remote
// refused for good stops none of the runner's pushes either.
func (l *Ledger) Publishable(ctx context.Context, remote string, tip, notes plumbing.Hash) (plumbing.Hash, plumbing.Hash, error) {
	wid, err := l.WriterID(ctx)
	if err != nil {
		return tip, notes, err
	}
	scratch := scratchPrefix(remote)
	fetched := map[string]plumbing.Hash{}
	for _, name := range []string{"ledger", "notes", "inbox/" + wid + "/ledger", "inbox/" + wid + "/notes"} {
		h, _, err := l.refs.Read(scratch + name)
		if err != nil {
			return tip, notes, err
		}
		fetched[name] = h
	}
	pub := tip
	if !tip.IsZero() {
		if pub, err = l.publishable(ctx, tip, fetched["ledger"], fetched["inbox/"+wid+"/ledger"]); err != nil {
			return tip, notes, err
		}
	}
	pubNotes, err := l.publishableNotes(ctx, notes, tip, fetched["notes"], fetched["inbox/"+wid+"/notes"])
	if err != nil {
		return tip, notes, err
	}
	return pub, pubNotes, nil
}

// withdrawnPatches are the patch ids of the proposals this clone withdrew
// that tip holds: their patch refs stay home with them.
func (l *Ledger) withdrawnPatches(tip plumbing.Hash) (map[string]bool, error) {
	out := map[string]bool{}
	paths, err := l.withdrawn()
	if err != nil || len(paths) == 0 || tip.IsZero() {
		return out, err
	}
	tree, err := l.obj.commitTree(tip)
	if err != nil {
		return nil, err
	}
	for p := range paths {
		if pathKind(p) != KindProposal {
			continue
		}
		h, ok, err := lookupIn(l.obj, tree, p)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		raw, err := l.obj.readBlob(h)
		if err != nil {
			return nil, err
		}
		if e, err := parseStored(p, raw); err == nil {
			out[e.PatchID] = true
		}
	}
	return out, nil
}

// publishableNotes is what Push sends in place of the local notes commit h
// when it holds the note line of a verdict this clone withdrew (ledger
// tip tip): a commit of h's notes without those lines, whose parents are
// the remote's notes (rb) and this clone's notes inbox (in), which never
// held them. It returns h itself when there is nothing to leave out.
func (l *Ledger) publishableNotes(ctx context.Context, h, tip, rb, in plumbing.Hash) (plumbing.Hash, error) {
	paths, err := l.withdrawn()
	if err != nil || len(paths) == 0 || tip.IsZero() || h.IsZero() {
		return h, err
	}
	ledgerTree, err := l.obj.commitTree(tip)
	if err != nil {
		return h, err
	}
	drop := map[string]map[string]bool{} // annotated object -> lines
	for p := range paths {
		if pathKind(p) != KindVerdict {
			continue
		}
		b, ok, err := lookupIn(l.obj, ledgerTree, p)
		if err != nil || !ok {
			if err != nil {
				return h, err
			}
			continue
		}
		raw, err := l.obj.readBlob(b)
		if err != nil {
			return h, err
		}
		e, err := parseStored(p, raw)
		if err != nil {
			continue
		}
		if drop[e.Commit] == nil {
			drop[e.Commit] = map[string]bool{}
		}
		drop[e.Commit][NoteLine(&e.Common)] = true
	}
	if len(drop) == 0 {
		return h, nil
	}
	tree, err := l.obj.commitTree(h)
	if err != nil {
		return h, err
	}
	notes, err := l.readNotes(tree)
	if err != nil {
		return h, err
	}
	var files []file
	for obj, lines := range drop {
		n, ok := notes[obj]
		if !ok {
			continue
		}
		raw, err := l.obj.readBlob(n.blob)
		if err != nil {
			return h, err
		}
		var kept []string
		for _, line := range strings.Split(string(raw), "\n") {
			if line != "" && !lines[line] {
				kept = append(kept, line)
			}
		}
		if len(kept) == len(strings.Split(strings.TrimSpace(string(raw)), "\n")) {
			continue
		}
		blob, err := l.obj.writeBlob([]byte(strings.Join(kept, "\n") + "\n"))
		if err != nil {
			return h, err
		}
		files = append(files, file{path: n.path, hash: blob, replace: true})
	}
	if len(files) == 0 {
		return h, nil
	}
	next, err := l.obj.insert(tree, files)
	if err != nil {
		return h, err
	}
	for _, p := range []plumbing.Hash{in, rb} {
		if !p.IsZero() {
			if t, err := l.obj.commitTree(p); err != nil {
				return h, err
			} else if t == next {
				return p, nil // already published as it is
			}
		}
	}
	var parents []plumbing.Hash
	for _, p := range []plumbing.Hash{rb, in} {
		if !p.IsZero() && !slices.Contains(parents, p) {
			parents = append(parents, p)
		}
	}
	return l.obj.commit(ctx, next, parents, "hone: the notes of this writer, without its withdrawn verdicts\n", l.sig(), l.signingKey())
}
