package ledger

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
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

// The index is a cache of the ledger branch's tip, kept at <git common
// dir>/hone/ledger.index so lookups read one file instead of parsing every
// entry: one line per file of the tip's tree, in git's order, and for an
// entry its common fields and the commit that added it. Because it lists
// every path and blob id of the tree, the tree's id can be computed from it
// alone; an index whose computed tree is not its tip's tree (stale, or
// edited by hand, however carefully its header was fixed) is rebuilt, never
// believed. The check hashes the listing and reads no entry. The cache is
// updated incrementally when the new tip's tree only adds files to the
// cached one (the ledger's normal case, merges included); any other change
// rebuilds it whole.
//
// Format 5 added the flags and the runner class; a cache of an older
// format is rebuilt.
const indexMagic = "hone-ledger-index 6"

// errCorruptIndex makes a query drop the cache and rebuild it.
var errCorruptIndex = errors.New("ledger index is corrupt")

type index struct {
	tip, tree plumbing.Hash
	body      []byte   // one line per file of tree, in path order
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
// one line of tab-separated fields. ID, Kind and Target are read from Path,
// which is always the one EntryPath derives from them: a file at any other
// path is not indexed as an entry.
type row struct {
	ID, Kind, Target string
	Path             string
	Blob             plumbing.Hash
	Created          int64 // Unix nanoseconds
	PatchID, Commit  string
	AttemptKey       string
	Class            int
	Verdict          string
	Hotspot          string
	Hypothesis       string
	Summary          string
	Pin              string
	Speedup          float64
	Flags            []string // Common.Flags, sorted
	RunnerClass      string
	Repository       string
	AddedBy          plumbing.Hash // the ledger commit that added the entry; zero when unknown
}

// Fields of an index line. The first says what the line is: "e" an entry,
// "f" any other file of the tree (README, attachments, files that are not
// well-formed entries), which carries its mode in place of the entry
// fields. Lookups test the leading fields, so most lines are never parsed.
const (
	fieldTag = iota
	fieldPath
	fieldBlob
	fieldAttemptKey
	fieldPatchID
	fieldCreated
	fieldCommit
	fieldClass
	fieldVerdict
	fieldHotspot
	fieldHypothesis
	fieldSummary
	fieldPin
	fieldSpeedup
	fieldFlags
	fieldRunnerClass
	fieldRepository
	fieldAddedBy
	rowFields
)

const fieldMode = fieldAttemptKey // in a file line

func (r *row) line() string {
	added := ""
	if !r.AddedBy.IsZero() {
		added = r.AddedBy.String()
	}
	return strings.Join([]string{"e", esc(r.Path), r.Blob.String(), esc(r.AttemptKey), esc(r.PatchID),
		strconv.FormatInt(r.Created, 10), esc(r.Commit), strconv.Itoa(r.Class), esc(r.Verdict),
		esc(r.Hotspot), esc(r.Hypothesis), esc(r.Summary), esc(r.Pin),
		strconv.FormatFloat(r.Speedup, 'g', -1, 64), esc(strings.Join(r.Flags, ",")), esc(r.RunnerClass), esc(r.Repository), added}, "\t") + "\n"
}

func fileLine(f file) string {
	return "f\t" + esc(f.path) + "\t" + f.hash.String() + "\t" + f.mode.String() + "\n"
}

// field returns field n of an index line, escaped as stored. The blob id
// has a fixed width, so the fields after it are reached without scanning it.
func field(line []byte, n int) []byte {
	if n > fieldBlob && len(line) > 2 && line[1] == '\t' {
		i := bytes.IndexByte(line[2:], '\t')
		start := 2 + i + 42
		if i < 0 || start > len(line) {
			return nil
		}
		line, n = line[start:], n-fieldBlob-1
	}
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

func isEntryLine(line []byte) bool { return len(line) > 2 && line[0] == 'e' && line[1] == '\t' }

// linePath is the path field of a line; paths never need escaping (entry
// paths are made of ids and names hone checks), so it is compared raw.
func linePath(line []byte) []byte { return field(line, fieldPath) }

// pathSegment returns segment n of an entry path (0 target, 1 kind, 3 file).
func pathSegment(p []byte, n int) []byte {
	for ; n > 0; n-- {
		i := bytes.IndexByte(p, '/')
		if i < 0 {
			return nil
		}
		p = p[i+1:]
	}
	if i := bytes.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}

// lineID is the entry id of an entry line.
func lineID(line []byte) []byte {
	return bytes.TrimSuffix(pathSegment(linePath(line), 3), []byte(".toml"))
}

// parseRow splits an entry line without allocating per field: every field
// is a substring of one string made from the line.
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
	if strings.IndexByte(s, '\t') >= 0 || f[fieldTag] != "e" || !plumbing.IsHash(f[fieldBlob]) || (s != "" && !plumbing.IsHash(s)) {
		return errCorruptIndex
	}
	f[fieldAddedBy] = s
	p := unesc(f[fieldPath])
	segs := strings.Split(p, "/")
	if len(segs) != 4 {
		return errCorruptIndex
	}
	created, err1 := strconv.ParseInt(f[fieldCreated], 10, 64)
	class, err2 := strconv.Atoi(f[fieldClass])
	speedup, err3 := strconv.ParseFloat(f[fieldSpeedup], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return errCorruptIndex
	}
	*r = row{ID: strings.TrimSuffix(segs[3], ".toml"), Kind: segs[1], Target: segs[0], Path: p,
		Blob: plumbing.NewHash(f[fieldBlob]), Created: created,
		AttemptKey: unesc(f[fieldAttemptKey]), PatchID: unesc(f[fieldPatchID]),
		Commit: unesc(f[fieldCommit]), Class: class, Verdict: unesc(f[fieldVerdict]),
		Hotspot: unesc(f[fieldHotspot]), Hypothesis: unesc(f[fieldHypothesis]),
		Summary: unesc(f[fieldSummary]), Pin: unesc(f[fieldPin]), Speedup: speedup,
		RunnerClass: unesc(f[fieldRunnerClass]), Repository: unesc(f[fieldRepository])}
	if flags := unesc(f[fieldFlags]); flags != "" {
		r.Flags = strings.Split(flags, ",")
	}
	if s != "" {
		r.AddedBy = plumbing.NewHash(s)
	}
	return nil
}

func before(t1 int64, id1 string, t2 int64, id2 string) bool {
	return t1 < t2 || (t1 == t2 && id1 < id2)
}

// byTime returns the rows of both lists, oldest first: the order every view
// lists entries in.
func byTime(a, b []row) []*row {
	out := make([]*row, 0, len(a)+len(b))
	for _, rs := range [][]row{a, b} {
		for i := range rs {
			out = append(out, &rs[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return before(out[i].Created, out[i].ID, out[j].Created, out[j].ID) })
	return out
}

func rowOf(s *Stored, blob plumbing.Hash) row {
	return row{ID: s.ID, Kind: string(s.Kind), Target: s.Target, Created: s.Created.UnixNano(),
		PatchID: s.PatchID, Commit: s.Commit, AttemptKey: s.AttemptKey, Class: s.Class,
		Verdict: s.Verdict, Path: s.Path, Blob: blob, Hotspot: s.Hotspot,
		Hypothesis: s.Hypothesis, Summary: s.Summary, Pin: s.Pin, Speedup: s.Speedup,
		Flags: s.Flags, RunnerClass: s.RunnerClass, Repository: s.Repository}
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

// count is the number of lines of the index: a bound on its rows.
func (ix *index) count() int { return bytes.Count(ix.body, []byte{'\n'}) }

// each calls fn with every entry row whose line passes keep (nil keeps
// all), in path order. fn returns false to stop.
func (ix *index) each(keep func(line []byte) bool, fn func(*row) bool) error {
	var r row
	for rest := ix.body; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return errCorruptIndex
		}
		line := rest[:i]
		rest = rest[i+1:]
		if !isEntryLine(line) || (keep != nil && !keep(line)) {
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

// treeHash computes the id of the tree the index lists, as git would from
// the same paths, modes and blob ids, without reading any object. Lines in
// one directory follow each other, so most lines only append to the open
// directory's listing.
func (ix *index) treeHash() (plumbing.Hash, error) {
	type dir struct {
		name []byte
		buf  []byte
	}
	stack := []dir{{}} // the open directories, the root first
	var open []byte    // their path, "a/b/" ("" for the root)
	var prev []byte    // the previous line's path
	var blob [20]byte
	var spare [][]byte // listings of closed directories, reused by depth
	closeDir := func() {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		open = open[:len(open)-len(d.name)-1]
		h := hashTree(d.buf)
		spare[len(stack)] = d.buf[:0]
		parent := &stack[len(stack)-1]
		parent.buf = append(append(append(parent.buf, "40000 "...), d.name...), 0)
		parent.buf = append(parent.buf, h[:]...)
	}
	for rest := ix.body; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return plumbing.ZeroHash, errCorruptIndex
		}
		line := rest[:i]
		rest = rest[i+1:]
		// "<tag>\t<path>\t<40 hex blob>[\t...]", read in one pass.
		end := -1
		if len(line) > 2 && line[1] == '\t' {
			end = bytes.IndexByte(line[2:], '\t') + 2
		}
		if end < 3 || len(line) < end+41 || (len(line) > end+41 && line[end+41] != '\t') {
			return plumbing.ZeroHash, errCorruptIndex
		}
		p := line[2:end]
		if p[0] == '/' || p[len(p)-1] == '/' || bytes.IndexByte(p, '\\') >= 0 || bytes.Compare(prev, p) >= 0 {
			return plumbing.ZeroHash, errCorruptIndex
		}
		if _, err := hex.Decode(blob[:], line[end+1:end+41]); err != nil {
			return plumbing.ZeroHash, errCorruptIndex
		}
		prev = p
		mode := regularMode
		if line[0] != 'e' {
			m, err := filemode.New(string(field(line, fieldMode)))
			if err != nil || m == filemode.Dir || m == filemode.Empty || line[0] != 'f' {
				return plumbing.ZeroHash, errCorruptIndex
			}
			mode = bytes.TrimLeft([]byte(m.String()), "0")
		}
		cut := bytes.LastIndexByte(p, '/') + 1
		dirPath, name := p[:cut], p[cut:]
		if !bytes.Equal(dirPath, open) {
			for !bytes.HasPrefix(dirPath, open) {
				closeDir()
			}
			for _, seg := range bytes.Split(bytes.TrimSuffix(dirPath[len(open):], []byte("/")), []byte("/")) {
				if len(seg) == 0 {
					return plumbing.ZeroHash, errCorruptIndex
				}
				for len(spare) <= len(stack) {
					spare = append(spare, make([]byte, 0, 4096))
				}
				stack = append(stack, dir{name: seg, buf: spare[len(stack)]})
				open = append(append(open, seg...), '/')
			}
		}
		cur := &stack[len(stack)-1]
		cur.buf = append(append(append(append(cur.buf, mode...), ' '), name...), 0)
		cur.buf = append(cur.buf, blob[:]...)
	}
	for len(stack) > 1 {
		closeDir()
	}
	return hashTree(stack[0].buf), nil
}

var regularMode = []byte("100644")

func hashTree(content []byte) plumbing.Hash {
	h := sha1.New()
	var head [32]byte
	h.Write(strconv.AppendInt(append(head[:0], "tree "...), int64(len(content)), 10))
	h.Write([]byte{0})
	h.Write(content)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

func (l *Ledger) indexPath() string { return filepath.Join(l.honeDir(), "ledger.index") }

// readIndex returns the cached index, or nil when it is absent, for another
// branch, or fails its checksum. Its content is not yet checked against any
// commit: see believe.
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

// believe reports whether a cached index lists exactly the tree of the
// commit it names: its tree line must be that commit's tree, and the tree
// computed from its lines must be that tree.
func (l *Ledger) believe(ix *index) bool {
	tree, err := l.obj.commitTree(ix.tip)
	if err != nil || tree != ix.tree {
		return false
	}
	got, err := ix.treeHash()
	return err == nil && got == tree
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
