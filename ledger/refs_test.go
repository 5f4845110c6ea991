package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func testRefs(t *testing.T) *refStore {
	dir := t.TempDir()
	return &refStore{commonDir: dir, honeDir: filepath.Join(dir, "hone")}
}

var (
	h1 = plumbing.NewHash("1111111111111111111111111111111111111111")
	h2 = plumbing.NewHash("2222222222222222222222222222222222222222")
)

func TestCompareAndSwap(t *testing.T) {
	r := testRefs(t)
	const ref = "refs/heads/hone/ledger"
	if err := r.cas(ref, h1, h2); !errors.Is(err, errRaceLost) {
		t.Fatalf("cas on a missing ref with a non-zero old value: %v, want a lost race", err)
	}
	if err := r.cas(ref, h1, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := r.cas(ref, h2, plumbing.ZeroHash); !errors.Is(err, errRaceLost) {
		t.Fatalf("creating an existing ref: %v, want a lost race", err)
	}
	if err := r.cas(ref, h2, h2); !errors.Is(err, errRaceLost) {
		t.Fatalf("cas from a stale value: %v, want a lost race", err)
	}
	if err := r.cas(ref, h2, h1); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := r.read(ref); err != nil || !ok || got != h2 {
		t.Fatalf("read = %v, %v, %v; want %v", got, ok, err, h2)
	}
	if _, err := os.Stat(filepath.Join(r.commonDir, ref+".lock")); !os.IsNotExist(err) {
		t.Fatal("the ref lock outlived the update")
	}
}

func TestReadPackedRef(t *testing.T) {
	r := testRefs(t)
	packed := "# pack-refs with: peeled fully-peeled sorted\n" + h1.String() + " refs/heads/hone/ledger\n"
	if err := os.WriteFile(filepath.Join(r.commonDir, "packed-refs"), []byte(packed), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := r.read("refs/heads/hone/ledger"); err != nil || !ok || got != h1 {
		t.Fatalf("read = %v, %v, %v", got, ok, err)
	}
	if _, ok, err := r.read("refs/heads/hone"); err != nil || ok {
		t.Fatalf("a prefix of a packed ref read as present: %v %v", ok, err)
	}
	// Under the lock, the packed value is what the swap compares against.
	if err := r.cas("refs/heads/hone/ledger", h2, h1); err != nil {
		t.Fatal(err)
	}
}

// A writer killed while holding <ref>.lock leaves it behind; the next writer
// finds the record in refs.lock and removes exactly that file.
func TestStaleRefLockIsRecovered(t *testing.T) {
	r := testRefs(t)
	const ref = "refs/heads/hone/ledger"
	if err := r.cas(ref, h1, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(r.commonDir, ref+".lock")
	if err := os.WriteFile(lockPath, []byte(h2.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.honeDir, "refs.lock"), []byte(lockPath+" "+fileID(fi)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.cas(ref, h2, h1); err != nil {
		t.Fatalf("cas after a dead writer's lock: %v", err)
	}
}
