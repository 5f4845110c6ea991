package ledger

import (
	"bytes"
	"context"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// index returns the index of the current branch tip, bringing the cache up to
// date first. A branch that does not exist has an empty index. A cached
// index is believed only once its lines are shown to list its commit's tree.
func (l *Ledger) index(ctx context.Context) (*index, error) {
	tip, ok, err := l.refs.Read(l.branchRef())
	if err != nil || !ok {
		return &index{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix != nil && l.ix.tip == tip {
		return l.ix, nil
	}
	cached := l.ix
	if cached == nil {
		if cached = l.readIndex(); cached != nil && !l.believe(cached) {
			cached = nil
		}
	}
	if cached != nil && cached.tip == tip {
		l.ix = cached
		return cached, nil
	}
	tree, err := l.obj.commitTree(tip)
	if err != nil {
		return nil, err
	}
	var added []file
	clean := false
	if cached != nil {
		var gone []lost
		if added, gone, err = diffTrees(l.obj, cached.tree, tree, ""); err != nil {
			return nil, err
		}
		clean = len(gone) == 0
	}
	if !clean {
		if added, err = listFiles(l.obj, tree, ""); err != nil {
			return nil, err
		}
	}
	lines, err := l.linesOf(ctx, tip, added)
	if err != nil {
		return nil, err
	}
	ix := &index{tip: tip, tree: tree}
	if clean {
		ix.body = mergeLines(cached.body, lines)
		if len(lines) == 0 {
			// The body is the cached one's, which may be the mapped file:
			// the mapping must outlive the old index.
			ix.src = cached.src
		}
	} else {
		ix.body = bytes.Join(lines, nil)
	}
	l.writeIndex(ix)
	l.ix = ix
	return ix, nil
}

// linesOf makes the index lines of files the tree of tip holds, in path
// order. A well-formed entry at its own path gets an entry line, with the
// commit that added it; anything else a file line.
func (l *Ledger) linesOf(ctx context.Context, tip plumbing.Hash, files []file) ([][]byte, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	rows := make([]*row, len(files))
	want := map[string]bool{}
	for i, f := range files {
		if !isEntryPath(f.path) || f.mode != filemode.Regular {
			continue
		}
		raw, err := l.obj.readBlob(f.hash)
		if err != nil {
			return nil, err
		}
		s, err := parseStored(f.path, raw)
		if err != nil || s.check() != nil || EntryPath(s.Target, s.Kind, s.ID) != f.path {
			continue // not an entry; verify reports it
		}
		r := rowOf(s, f.hash)
		rows[i] = &r
		want[f.path] = true
	}
	by, err := adders(ctx, l.obj, tip, want)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(files))
	for i, f := range files {
		if rows[i] == nil {
			out[i] = []byte(fileLine(f))
			continue
		}
		rows[i].AddedBy = by[f.path]
		out[i] = []byte(rows[i].line())
	}
	return out, nil
}

// mergeLines adds lines (in path order) to a body in path order. With no
// lines it is body itself, which may point into a mapped file.
func mergeLines(body []byte, lines [][]byte) []byte {
	if len(lines) == 0 {
		return body
	}
	var b bytes.Buffer
	n := len(body)
	for _, l := range lines {
		n += len(l)
	}
	b.Grow(n)
	for rest := body; ; {
		next := lines[0]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 || bytes.Compare(linePath(rest[:i]), linePath(next)) > 0 {
			b.Write(next)
			if lines = lines[1:]; len(lines) == 0 {
				b.Write(rest)
				return b.Bytes()
			}
			continue
		}
		b.Write(rest[:i+1])
		rest = rest[i+1:]
	}
}
