package ledger

import (
	"bytes"
	"compress/zlib"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// storedZlib must produce streams any zlib reader accepts, across the edges
// of its 65,535-byte stored blocks.
func TestStoredZlibRoundTrips(t *testing.T) {
	for _, n := range []int{0, 1, 100, 0xffff - 1, 0xffff, 0xffff + 1, 3*0xffff + 7} {
		p := bytes.Repeat([]byte("hone\x00\xff"), n/6+1)[:n]
		r, err := zlib.NewReader(bytes.NewReader(storedZlib(p)))
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

// Objects put writes are read back by git itself, byte for byte, and pass
// git's own integrity check.
func TestPutWritesObjectsGitReads(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	o := objects{dir: filepath.Join(dir, ".git", "objects")}
	big := strings.Repeat("0123456789abcdef", 10000) // spans three stored blocks
	for _, content := range []string{"", "one line\n", big} {
		h, err := o.put(plumbing.BlobObject, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("git", "-C", dir, "cat-file", "blob", h.String()).Output()
		if err != nil || string(out) != content {
			t.Fatalf("git cat-file blob %s: %v; got %d bytes, want %d", h, err, len(out), len(content))
		}
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict", "--unreachable").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}
