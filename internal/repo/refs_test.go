package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
)

var ctx = context.Background()

func testRefs(t *testing.T) *Refs {
	dir := t.TempDir()
	return &Refs{commonDir: dir, stateDir: filepath.Join(dir, "hone")}
}

var (
	h1 = plumbing.NewHash("1111111111111111111111111111111111111111")
	h2 = plumbing.NewHash("2222222222222222222222222222222222222222")
)

func TestCompareAndSwap(t *testing.T) {
	r := testRefs(t)
	const ref = "refs/heads/hone/ledger"
	if err := r.CompareAndSwap(ctx, ref, h1, h2); !errors.Is(err, ErrRaceLost) {
		t.Fatalf("cas on a missing ref with a non-zero old value: %v, want a lost race", err)
	}
	if err := r.CompareAndSwap(ctx, ref, h1, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := r.CompareAndSwap(ctx, ref, h2, plumbing.ZeroHash); !errors.Is(err, ErrRaceLost) {
		t.Fatalf("creating an existing ref: %v, want a lost race", err)
	}
	if err := r.CompareAndSwap(ctx, ref, h2, h2); !errors.Is(err, ErrRaceLost) {
		t.Fatalf("cas from a stale value: %v, want a lost race", err)
	}
	if err := r.CompareAndSwap(ctx, ref, h2, h1); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := r.Read(ref); err != nil || !ok || got != h2 {
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
	if got, ok, err := r.Read("refs/heads/hone/ledger"); err != nil || !ok || got != h1 {
		t.Fatalf("read = %v, %v, %v", got, ok, err)
	}
	if _, ok, err := r.Read("refs/heads/hone"); err != nil || ok {
		t.Fatalf("a prefix of a packed ref read as present: %v %v", ok, err)
	}
	// Under the lock, the packed value is what the swap compares against.
	if err := r.CompareAndSwap(ctx, "refs/heads/hone/ledger", h2, h1); err != nil {
		t.Fatal(err)
	}
}

// A writer killed while holding <ref>.lock leaves it behind; the next writer
// finds the record beside refs.lock and removes exactly that file.
func TestStaleRefLockIsRecovered(t *testing.T) {
	r := testRefs(t)
	const ref = "refs/heads/hone/ledger"
	if err := r.CompareAndSwap(ctx, ref, h1, plumbing.ZeroHash); err != nil {
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
	if err := os.WriteFile(filepath.Join(r.stateDir, "refs.lock.record"), []byte(lockPath+" "+fileID(fi)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.CompareAndSwap(ctx, ref, h2, h1); err != nil {
		t.Fatalf("cas after a dead writer's lock: %v", err)
	}
}

// A <ref>.lock that hone did not record is git's (or another tool's): it is
// never removed, and the writer reports busy rather than waiting forever.
func TestForeignRefLockIsRespected(t *testing.T) {
	r := testRefs(t)
	const ref = "refs/heads/x"
	lockPath := filepath.Join(r.commonDir, ref+".lock")
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.CompareAndSwap(ctx, ref, h1, plumbing.ZeroHash); errs.CodeOf(err) != errs.Busy {
		t.Fatalf("cas while git holds the ref lock: %v; want busy", err)
	}
	if _, err := os.Stat(lockPath); err != nil {
		t.Fatalf("hone removed a lock it did not make: %v", err)
	}
}

// Update retries on a fresh tip, and a ref deleted under it stops the loop
// instead of being started afresh.
func TestUpdate(t *testing.T) {
	r := testRefs(t)
	const ref = "refs/heads/hone/ledger"
	calls := 0
	_, err := r.Update(ctx, ref, func(tip plumbing.Hash, ok bool) (plumbing.Hash, error) {
		calls++
		if calls == 1 {
			// Another writer moves the ref between the read and the swap.
			if err := r.CompareAndSwap(ctx, ref, h1, plumbing.ZeroHash); err != nil {
				t.Fatal(err)
			}
			return h2, nil
		}
		if !ok || tip != h1 {
			t.Fatalf("retry saw tip %v, %v; want %v", tip, ok, h1)
		}
		return h2, nil
	})
	if err != nil || calls != 2 {
		t.Fatalf("Update = %v after %d calls", err, calls)
	}
	_, err = r.Update(ctx, ref, func(tip plumbing.Hash, ok bool) (plumbing.Hash, error) {
		os.Remove(r.path(ref))
		return h1, nil
	})
	if errs.CodeOf(err) != errs.Failure {
		t.Fatalf("Update of a ref deleted under it: %v; want a failure", err)
	}
}
