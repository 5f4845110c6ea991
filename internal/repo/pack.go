package repo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

// packedCommit reads commit h from the repository's packs when it is stored
// there whole (not as a delta), mapping the pack index and pack and touching
// only the pages a binary search and the object need. Every hone process
// that reads the ledger checks its cache against the tip commit, and the
// tip of a packed ledger would otherwise make go-git decode a whole pack
// index first: milliseconds for one small object. ok is false when the
// commit is not found this way; the caller then asks go-git.
func packedCommit(objectsDir string, h plumbing.Hash) (raw []byte, ok bool) {
	idxs, _ := filepath.Glob(filepath.Join(objectsDir, "pack", "*.idx"))
	for _, idx := range idxs {
		off, found := findInIndex(idx, h)
		if !found {
			continue
		}
		raw, ok := readPackedObject(idx[:len(idx)-len(".idx")]+".pack", off, 1)
		return raw, ok && objectID("commit", raw) == h
	}
	return nil, false
}

func mapRead(path string) ([]byte, func(), bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil, nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return b, func() { syscall.Munmap(b) }, true
}

// findInIndex looks h up in a version 2 pack index.
func findInIndex(path string, h plumbing.Hash) (int64, bool) {
	b, unmap, ok := mapRead(path)
	if !ok {
		return 0, false
	}
	defer unmap()
	const head = 8 + 256*4
	if len(b) < head || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return 0, false
	}
	fan := func(i int) int { return int(binary.BigEndian.Uint32(b[8+4*i:])) }
	n := fan(255)
	lo := 0
	if h[0] > 0 {
		lo = fan(int(h[0]) - 1)
	}
	hi := fan(int(h[0]))
	names := b[head:]
	if len(names) < n*20+n*4+n*4 || lo > hi || hi > n {
		return 0, false
	}
	i := lo + sort.Search(hi-lo, func(k int) bool { return bytes.Compare(names[(lo+k)*20:(lo+k)*20+20], h[:]) >= 0 })
	if i >= hi || !bytes.Equal(names[i*20:i*20+20], h[:]) {
		return 0, false
	}
	offs := names[n*20+n*4:]
	off := binary.BigEndian.Uint32(offs[i*4:])
	if off&0x80000000 == 0 {
		return int64(off), true
	}
	large := offs[n*4:]
	j := int(off &^ 0x80000000)
	if len(large) < j*8+8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(large[j*8:])), true
}

// readPackedObject inflates the object at off in a pack when it has type
// want (1 is a commit) and is not a delta.
func readPackedObject(path string, off int64, want byte) ([]byte, bool) {
	b, unmap, ok := mapRead(path)
	if !ok {
		return nil, false
	}
	defer unmap()
	if off < 12 || off >= int64(len(b)) {
		return nil, false
	}
	p := b[off:]
	c := p[0]
	typ, size, shift := (c>>4)&7, uint64(c&15), uint(4)
	n := 1
	for c&0x80 != 0 {
		if n >= len(p) || shift > 56 {
			return nil, false
		}
		c = p[n]
		size |= uint64(c&0x7f) << shift
		shift += 7
		n++
	}
	if typ != want || size > 1<<24 {
		return nil, false
	}
	zr, err := zlib.NewReader(bytes.NewReader(p[n:]))
	if err != nil {
		return nil, false
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, false
	}
	return out, true
}

// objectID is the id git gives an object of type t with content b.
func objectID(t string, b []byte) plumbing.Hash {
	d := sha1.New()
	d.Write(strconv.AppendInt([]byte(t+" "), int64(len(b)), 10))
	d.Write([]byte{0})
	d.Write(b)
	var h plumbing.Hash
	d.Sum(h[:0])
	return h
}
