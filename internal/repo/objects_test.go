package repo_test

import (
	"bytes"
	"compress/zlib"
	"github.com/hone-perf/hone/internal/repo"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/testgit"
)

// storedZlib must produce streams any zlib reader accepts, across the edges
// of its 65,535-byte stored blocks.
func TestStoredZlibRoundTrips(t *testing.T) {
	for _, n := range []int{0, 1, 100, 0xffff - 1, 0xffff, 0xffff + 1, 3*0xffff + 7} {
		p := bytes.Repeat([]byte("hone\x00\xff"), n/6+1)[:n]
		r, err := zlib.NewReader(bytes.NewReader(repo.StoredZlib(p)))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, p) {
			t.Fatalf("%d bytes: round trip gave %d different bytes", n, len(got))
		}
	}
}

// Objects WriteObject writes are read back by git itself, byte for byte,
// and pass git's own integrity check.
func TestWriteObjectWritesObjectsGitReads(t *testing.T) {
	dir := testgit.NewRepo(t, nil)
	o, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", 10000) // spans three stored blocks
	for _, content := range []string{"", "one line\n", big} {
		h, err := o.WriteObject(plumbing.BlobObject, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		// Git's output comes back trimmed, so the size check covers what
		// trimming hides.
		size := testgit.Git(t, dir, "cat-file", "-s", h.String())
		blob := testgit.Git(t, dir, "cat-file", "blob", h.String())
		if size != strconv.Itoa(len(content)) || blob != strings.TrimSpace(content) {
			t.Fatalf("git cat-file %s: %s bytes reading %.20q, want %d bytes of %.20q", h, size, blob, len(content), content)
		}
	}
	testgit.Git(t, dir, "fsck", "--strict", "--unreachable")
}
