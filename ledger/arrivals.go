package ledger

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
)

// arrival is where an entry reached the ledger and who brought it.
type arrival struct {
	seq      int
	proposer string
}

// arrivals is, for the branch's tip, where each entry arrived and who
// proposed each proposal; see arrivalsSince for what both mean. A round
// reads it from a cache kept in the clone's state folder and reads from
// git only the commits the branch gained since the cached tip, so a
// runner's round costs what changed, not the whole history. The cache is
// taken only when its tip is on the branch's first-parent line; anything
// else (a branch rewritten, a pull that put another tip on that line, no
// cache) is read whole, which gives the same map by construction.
func (l *Ledger) arrivals(ctx context.Context) (map[string]arrival, error) {
	tip, ok, err := l.refs.Read(l.branchRef())
	if err != nil || !ok {
		return map[string]arrival{}, err
	}
	prev := l.readArrivals()
	if prev != nil && prev.tip == tip {
		return prev.at, nil
	}
	st, err := l.arrivalsSince(ctx, prev, tip)
	if err != nil {
		return nil, err
	}
	l.writeArrivals(st)
	return st.at, nil
}

// arrivalState is arrivals at tip; count is the number of commits on the
// first-parent line up to tip, the seq of tip's own arrivals.
type arrivalState struct {
	tip   plumbing.Hash
	count int
	at    map[string]arrival
}

// fullArrivals reads the arrivals at tip from the whole history, ignoring
// any cache: what the incremental form must always equal.
func (l *Ledger) fullArrivals(ctx context.Context, tip plumbing.Hash) (map[string]arrival, error) {
	st, err := l.arrivalsSince(ctx, nil, tip)
	if err != nil {
		return nil, err
	}
	return st.at, nil
}

// arrivalsSince extends prev (nil: nothing) to tip. An entry arrives at
// the first commit of the branch's first-parent line whose tree holds it
// (the server keeps every push on that line, so that is when it reached
// the ledger; no field an agent writes counts): its seq is that commit's
// place on the line, oldest first, from 1. Its proposer is whoever made the
// commit that first wrote it, among the commits that arrival brought (the
// first-parent commit itself, or what a merge or fold brought beside it):
// the oldest one that adds it with one parent, by committer time, then
// hash. Not the first-parent commit's maker: entries often arrive through
// a merge, a writer's pull or a fold of the inboxes by whoever writes
// next, and that writer is not their proposer. Were it, every proposal a
// runner folded in would share the runner's one turn of the round robin,
// and a flood that arrived in the same fold would starve the rest. Only
// proposals are given a proposer; the queue asks for no other.
func (l *Ledger) arrivalsSince(ctx context.Context, prev *arrivalState, tip plumbing.Hash) (*arrivalState, error) {
	rng := []string{tip.String()}
	if prev != nil {
		rng = append(rng, "^"+prev.tip.String())
	}
	// Every commit of the line is listed, adding files or not (so the
	// first one's parent shows whether prev.tip is on the line).
	raw, err := l.git(ctx, append([]string{"log", "--first-parent", "--reverse", "--diff-merges=first-parent", "--no-renames",
		"--name-status", "--format=%x00%H %P"}, append(rng, "--")...)...)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the order of the ledger's commits")
	}
	line := firstParentLine(string(raw))
	if prev != nil && (len(line) == 0 || line[0].parent != prev.tip) {
		return l.arrivalsSince(ctx, nil, tip)
	}
	st := &arrivalState{tip: tip, at: map[string]arrival{}}
	if prev != nil {
		st.count = prev.count
		for id, a := range prev.at {
			st.at[id] = a
		}
	}
	landed := map[string]plumbing.Hash{} // new proposal id -> the first-parent commit it arrived at
	for _, c := range line {
		st.count++
		for _, p := range c.added {
			id := entryID(p)
			if _, seen := st.at[id]; seen {
				continue
			}
			st.at[id] = arrival{seq: st.count}
			if strings.Contains(p, "/"+string(KindProposal)+"/") {
				landed[id] = c.hash
			}
		}
	}
	if len(landed) == 0 {
		return st, nil
	}
	writers, err := l.writersOf(ctx, rng, line, landed)
	if err != nil {
		return nil, err
	}
	who := map[plumbing.Hash]string{}
	for id, c := range writers {
		if _, known := who[c]; !known {
			if who[c], err = l.maker(ctx, c); err != nil {
				return nil, err
			}
		}
		a := st.at[id]
		a.proposer = who[c]
		st.at[id] = a
	}
	return st, nil
}

// fpCommit is one commit of the first-parent line with the entry paths it
// adds against its first parent.
type fpCommit struct {
	hash, parent plumbing.Hash
	added        []string
}

func firstParentLine(raw string) []fpCommit {
	var out []fpCommit
	for _, rec := range strings.Split(raw, "\x00") {
		head, files, _ := strings.Cut(rec, "\n")
		hs := strings.Fields(head)
		if len(hs) == 0 || !plumbing.IsHash(hs[0]) {
			continue
		}
		c := fpCommit{hash: plumbing.NewHash(hs[0])}
		if len(hs) > 1 {
			c.parent = plumbing.NewHash(hs[1])
		}
		for _, ln := range strings.Split(files, "\n") {
			if f, ok := strings.CutPrefix(ln, "A\t"); ok && isEntryPath(f) {
				c.added = append(c.added, f)
			}
		}
		out = append(out, c)
	}
	return out
}

func entryID(path string) string {
	return strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".toml")
}

// writersOf finds, for each proposal in landed, the commit that wrote it:
// among the commits of rng that its arrival brought, the oldest one with
// one parent that adds it.
func (l *Ledger) writersOf(ctx context.Context, rng []string, line []fpCommit, landed map[string]plumbing.Hash) (map[string]plumbing.Hash, error) {
	raw, err := l.git(ctx, append([]string{"rev-list", "--parents", "--timestamp"}, rng...)...)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the ledger's commits")
	}
	type node struct {
		time    int64
		parents []plumbing.Hash
	}
	graph := map[plumbing.Hash]node{}
	for _, ln := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		fs := strings.Fields(ln)
		if len(fs) < 2 || !plumbing.IsHash(fs[1]) {
			continue
		}
		t, _ := strconv.ParseInt(fs[0], 10, 64)
		n := node{time: t}
		for _, p := range fs[2:] {
			n.parents = append(n.parents, plumbing.NewHash(p))
		}
		graph[plumbing.NewHash(fs[1])] = n
	}
	// brought: each commit of the range -> the first-parent commit whose
	// arrival brought it (itself, or what its other parents reach that no
	// earlier commit of the line brought).
	brought := map[plumbing.Hash]plumbing.Hash{}
	for _, c := range line {
		brought[c.hash] = c.hash
	}
	for _, c := range line {
		stack := append([]plumbing.Hash(nil), graph[c.hash].parents...)
		if len(stack) > 0 {
			stack = stack[1:]
		}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n, in := graph[h]
			if _, done := brought[h]; done || !in {
				continue
			}
			brought[h] = c.hash
			stack = append(stack, n.parents...)
		}
	}
	raw, err = l.git(ctx, append([]string{"log", "--no-merges", "--no-renames", "--diff-filter=A", "--name-only", "--format=%x00%H"}, append(rng, "--")...)...)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read who wrote the ledger's entries")
	}
	out := map[string]plumbing.Hash{}
	eachAdded(string(raw), func(commit plumbing.Hash, id string) {
		at, ok := landed[id]
		if !ok || brought[commit] != at {
			return
		}
		if cur, have := out[id]; have {
			a, b := graph[commit], graph[cur]
			if a.time > b.time || a.time == b.time && commit.String() > cur.String() {
				return
			}
		}
		out[id] = commit
	})
	return out, nil
}

// eachAdded calls fn with each entry id a `git log --name-only
// --format=%x00%H` listing shows added, with the commit that adds it.
func eachAdded(raw string, fn func(commit plumbing.Hash, id string)) {
	for _, rec := range strings.Split(raw, "\x00") {
		head, files, _ := strings.Cut(rec, "\n")
		if !plumbing.IsHash(head) {
			continue
		}
		for _, f := range strings.Fields(files) {
			if isEntryPath(f) {
				fn(plumbing.NewHash(head), entryID(f))
			}
		}
	}
}

// arrivalsPath is the cache of the arrivals at one tip.
func (l *Ledger) arrivalsPath() string { return filepath.Join(l.honeDir(), "arrivals") }

// readArrivals reads the cache; nil when there is none or it cannot be
// read (it is then rebuilt).
func (l *Ledger) readArrivals() *arrivalState {
	b, err := os.ReadFile(l.arrivalsPath())
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		return nil
	}
	var tip string
	st := &arrivalState{at: map[string]arrival{}}
	if n, err := fmt.Sscanf(sc.Text(), "arrivals 1 %s %d", &tip, &st.count); n != 2 || err != nil || !plumbing.IsHash(tip) {
		return nil
	}
	st.tip = plumbing.NewHash(tip)
	for sc.Scan() {
		id, rest, ok := strings.Cut(sc.Text(), "\t")
		seq, who, ok2 := strings.Cut(rest, "\t")
		n, err := strconv.Atoi(seq)
		p, qerr := strconv.Unquote(who)
		if !ok || !ok2 || err != nil || qerr != nil {
			return nil
		}
		st.at[id] = arrival{seq: n, proposer: p}
	}
	if sc.Err() != nil {
		return nil
	}
	return st
}

// writeArrivals replaces the cache with st. A failure only costs the next
// round a whole read.
func (l *Ledger) writeArrivals(st *arrivalState) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "arrivals 1 %s %d\n", st.tip, st.count)
	for id, a := range st.at {
		fmt.Fprintf(&b, "%s\t%d\t%s\n", id, a.seq, strconv.Quote(a.proposer))
	}
	if err := os.MkdirAll(l.honeDir(), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(l.honeDir(), ".arrivals-")
	if err != nil {
		return
	}
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), l.arrivalsPath())
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}
