package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/hone-perf/hone/internal/atomicfile"
)

// The index is a cache of every entry's common fields, one line per entry,
// kept at <git common dir>/hone/ledger.index so lookups read one file instead
// of parsing every entry. It is derived from the tree of the branch tip alone:
// anything in it can be rebuilt from the branch, a file whose checksum or
// header does not match is rebuilt, and it is updated incrementally when the
// new tip's tree only adds files to the cached one (the ledger's normal case,
// merges included); any other change rebuilds it whole.
const indexMagic = "hone-ledger-index 3"

// errCorruptIndex makes a query drop the cache and rebuild it.
var errCorruptIndex = errors.New("ledger index is corrupt")

type index struct {
	tip, tree plumbing.Hash
	body      []byte   // one row per line
	src       *mapping // the mapped file body may point into; nil when on the heap
}

// mapping is the index file mapped read-only. hone replaces the file by
// rename, never in place, so a mapping stays valid; it is unmapped once no
// index refers to it. Rows never point into it: parsing copies.
type mapping struct{ b []byte }

func mapFile(path string) (*mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 || st.Size() > 1<<32 {
		return nil, errCorruptIndex
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, err
	}
	m := &mapping{b}
	runtime.AddCleanup(m, func(b []byte) { syscall.Munmap(b) }, b)
	return m, nil
}

// row is one entry's line in the index. Free text is escaped so a row stays
// one line of tab-separated fields. Path is written empty when it is the one
// EntryPath derives from the row's own fields, which is every sound entry.
type row struct {
	ID, Kind, Target string
	Created          int64 // Unix nanoseconds
	PatchID, Commit  string
	AttemptKey       string
	Class            int
	Verdict, Path    string
	Blob             plumbing.Hash
	Hotspot          string
	Hypothesis       string
	Summary          string
	Pin              string
	Speedup          float64
}

const rowFields = 16

func (r *row) line() string {
	p := r.Path
	if p == EntryPath(r.Target, Kind(r.Kind), r.ID) {
		p = ""
	}
	return strings.Join([]string{r.ID, r.Kind, r.Target, esc(r.AttemptKey), esc(r.PatchID),
		strconv.FormatInt(r.Created, 10), esc(r.Commit), strconv.Itoa(r.Class), esc(r.Verdict),
		esc(p), r.Blob.String(), esc(r.Hotspot), esc(r.Hypothesis), esc(r.Summary), esc(r.Pin),
		strconv.FormatFloat(r.Speedup, 'g', -1, 64)}, "\t") + "\n"
}

// Positions of the fields lookups test before parsing a line; they come
// first so finding them reads only the start of each line.
const (
	fieldID = iota
	fieldKind
	fieldTarget
	fieldAttemptKey
	fieldPatchID
	fieldCreated
)

// field returns field n of an index line, escaped as stored.
func field(line []byte, n int) []byte {
	for ; n > 0; n-- {
		i := bytes.IndexByte(line, '\t')
		if i < 0 {
			return nil
		}
		line = line[i+1:]
	}
	if i := bytes.IndexByte(line, '\t'); i >= 0 {
		return line[:i]
	}
	return line
}

// parseRow splits a line without allocating per field: every field is a
// substring of one string made from the line.
func parseRow(line []byte, r *row) error {
	var f [rowFields]string
	s := string(line)
	for i := 0; i < rowFields-1; i++ {
		j := strings.IndexByte(s, '\t')
		if j < 0 {
			return errCorruptIndex
		}
		f[i], s = s[:j], s[j+1:]
	}
	if strings.IndexByte(s, '\t') >= 0 || len(f[0]) < 2 || !plumbing.IsHash(f[10]) {
		return errCorruptIndex
	}
	f[rowFields-1] = s
	created, err1 := strconv.ParseInt(f[fieldCreated], 10, 64)
	class, err2 := strconv.Atoi(f[7])
	speedup, err3 := strconv.ParseFloat(f[15], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return errCorruptIndex
	}
	*r = row{ID: f[fieldID], Kind: f[fieldKind], Target: f[fieldTarget], Created: created,
		AttemptKey: unesc(f[fieldAttemptKey]), PatchID: unesc(f[fieldPatchID]),
		Commit: unesc(f[6]), Class: class, Verdict: unesc(f[8]),
		Path: unesc(f[9]), Blob: plumbing.NewHash(f[10]), Hotspot: unesc(f[11]),
		Hypothesis: unesc(f[12]), Summary: unesc(f[13]), Pin: unesc(f[14]), Speedup: speedup}
	if r.Path == "" {
		r.Path = EntryPath(r.Target, Kind(r.Kind), r.ID)
	}
	return nil
}

// rowTime reads the sort key of a line (creation time, then id) without
// parsing the rest.
func rowTime(line []byte) (int64, string) {
	t, _ := strconv.ParseInt(string(field(line, fieldCreated)), 10, 64)
	return t, string(field(line, fieldID))
}

func before(t1 int64, id1 string, t2 int64, id2 string) bool {
	return t1 < t2 || (t1 == t2 && id1 < id2)
}

func rowOf(s *Stored, blob plumbing.Hash) row {
	return row{ID: s.ID, Kind: string(s.Kind), Target: s.Target, Created: s.Created.UnixNano(),
		PatchID: s.PatchID, Commit: s.Commit, AttemptKey: s.AttemptKey, Class: s.Class,
		Verdict: s.Verdict, Path: s.Path, Blob: blob, Hotspot: s.Hotspot,
		Hypothesis: s.Hypothesis, Summary: s.Summary, Pin: s.Pin, Speedup: s.Speedup}
}

var escaper = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

func esc(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\r") {
		return s
	}
	return escaper.Replace(s)
}

func unesc(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// each calls fn with every row whose line passes keep (nil keeps all), in
// the index's order, which is time order. fn returns false to stop.
func (ix *index) each(keep func(line []byte) bool, fn func(*row) bool) error {
	var r row
	for rest := ix.body; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return errCorruptIndex
		}
		line := rest[:i]
		rest = rest[i+1:]
		if keep != nil && !keep(line) {
			continue
		}
		if err := parseRow(line, &r); err != nil {
			return err
		}
		if !fn(&r) {
			return nil
		}
	}
	return nil
}

func (l *Ledger) indexPath() string { return filepath.Join(l.honeDir(), "ledger.index") }

// readIndex returns the cached index, or nil when it is absent, for another
// branch, or fails its checksum.
func (l *Ledger) readIndex() *index {
	m, err := mapFile(l.indexPath())
	if err != nil {
		return nil
	}
	b := m.b
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil
	}
	h := strings.Split(string(b[:nl]), "\t")
	if len(h) != 6 || h[0] != indexMagic || h[1] != l.ws.Config.Ledger.Branch || !plumbing.IsHash(h[2]) || !plumbing.IsHash(h[3]) {
		return nil
	}
	body := b[nl+1:]
	if n, err := strconv.Atoi(h[4]); err != nil || n != bytes.Count(body, []byte{'\n'}) {
		return nil
	}
	if h[5] != fmt.Sprintf("%08x", crc32.ChecksumIEEE(body)) {
		return nil
	}
	return &index{tip: plumbing.NewHash(h[2]), tree: plumbing.NewHash(h[3]), body: body, src: m}
}

// writeIndex replaces the cache atomically. Failing to write it is not an
// error: the cache only saves time.
func (l *Ledger) writeIndex(ix *index) {
	if err := os.MkdirAll(l.honeDir(), 0o755); err != nil {
		return
	}
	head := fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%08x\n", indexMagic, l.ws.Config.Ledger.Branch, ix.tip, ix.tree,
		bytes.Count(ix.body, []byte{'\n'}), crc32.ChecksumIEEE(ix.body))
	atomicfile.Write(l.indexPath(), append([]byte(head), ix.body...), 0o644)
}

// index returns the index of the current branch tip, bringing the cache up to
// date first. A branch that does not exist has an empty index.
func (l *Ledger) index() (*index, error) {
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
		cached = l.readIndex()
	}
	if cached != nil && cached.tip == tip {
		l.ix = cached
		return cached, nil
	}
	tree, err := l.obj.commitTree(tip)
	if err != nil {
		return nil, err
	}
	ix := &index{tip: tip, tree: tree}
	var added []file
	clean := false
	if cached != nil {
		if added, clean, err = l.addedFiles(cached.tree, tree, ""); err != nil {
			return nil, err
		}
		if clean {
			ix.body, ix.src = cached.body, cached.src
		}
	}
	if !clean {
		if added, err = l.allFiles(tree, ""); err != nil {
			return nil, err
		}
	}
	var rows []row
	for _, f := range added {
		if !isEntryPath(f.path) {
			continue
		}
		raw, err := l.obj.readBlob(f.hash)
		if err != nil {
			return nil, err
		}
		s, err := parseStored(f.path, raw)
		if err != nil || s.check() != nil {
			continue // a malformed entry is not indexed; verify reports it
		}
		rows = append(rows, rowOf(s, f.hash))
	}
	ix.body = appendSorted(ix.body, rows)
	l.writeIndex(ix)
	l.ix = ix
	return ix, nil
}

// addedFiles lists the files of tree newT that oldT lacks. clean is false when
// newT also changes or removes something of oldT, which an append-only ledger
// never does; the caller then rebuilds from scratch.
func (l *Ledger) addedFiles(oldT, newT plumbing.Hash, prefix string) (added []file, clean bool, err error) {
	if oldT == newT {
		return nil, true, nil
	}
	oldE, err := l.obj.tree(oldT)
	if err != nil {
		return nil, false, err
	}
	newE, err := l.obj.tree(newT)
	if err != nil {
		return nil, false, err
	}
	byName := make(map[string]int, len(newE))
	for i, e := range newE {
		byName[e.Name] = i
	}
	seen := make(map[string]bool, len(oldE))
	for _, o := range oldE {
		seen[o.Name] = true
		i, ok := byName[o.Name]
		if !ok || newE[i].Mode != o.Mode {
			return nil, false, nil
		}
		if newE[i].Hash == o.Hash {
			continue
		}
		if o.Mode != filemode.Dir {
			return nil, false, nil
		}
		sub, clean, err := l.addedFiles(o.Hash, newE[i].Hash, prefix+o.Name+"/")
		if err != nil || !clean {
			return nil, clean, err
		}
		added = append(added, sub...)
	}
	for _, e := range newE {
		if seen[e.Name] {
			continue
		}
		if e.Mode == filemode.Dir {
			sub, err := l.allFiles(e.Hash, prefix+e.Name+"/")
			if err != nil {
				return nil, false, err
			}
			added = append(added, sub...)
		} else {
			added = append(added, file{path: prefix + e.Name, hash: e.Hash})
		}
	}
	return added, true, nil
}

// allFiles lists every file under tree t.
func (l *Ledger) allFiles(t plumbing.Hash, prefix string) ([]file, error) {
	entries, err := l.obj.tree(t)
	if err != nil {
		return nil, err
	}
	var out []file
	for _, e := range entries {
		if e.Mode == filemode.Dir {
			sub, err := l.allFiles(e.Hash, prefix+e.Name+"/")
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		} else {
			out = append(out, file{path: prefix + e.Name, hash: e.Hash})
		}
	}
	return out, nil
}

// appendSorted adds rows to a body kept in time order. New entries are almost
// always newer than every indexed one; only then is it a plain append.
func appendSorted(body []byte, rows []row) []byte {
	if len(rows) == 0 {
		return body
	}
	sort.Slice(rows, func(i, j int) bool {
		return before(rows[i].Created, rows[i].ID, rows[j].Created, rows[j].ID)
	})
	var b bytes.Buffer
	b.Grow(len(body) + 256*len(rows))
	b.Write(body)
	last := bytes.LastIndexByte(bytes.TrimSuffix(body, []byte{'\n'}), '\n')
	lt, lid := rowTime(body[last+1:])
	inOrder := len(body) == 0 || !before(rows[0].Created, rows[0].ID, lt, lid)
	for i := range rows {
		b.WriteString(rows[i].line())
	}
	if inOrder {
		return b.Bytes()
	}
	lines := bytes.SplitAfter(b.Bytes(), []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	sort.SliceStable(lines, func(i, j int) bool {
		ti, idi := rowTime(lines[i])
		tj, idj := rowTime(lines[j])
		return before(ti, idi, tj, idj)
	})
	return bytes.Join(lines, nil)
}
