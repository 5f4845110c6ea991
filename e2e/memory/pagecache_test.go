package memory

import (
	"cmp"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/ledger"
)

// pageCacheMemo keeps (seed, answer) as page-cache residency bits of a
// large read-only system file every run can open: readahead sets a bit,
// posix_fadvise(DONTNEED) over the bit's whole gap clears it (a kernel
// that caches the file in large folios drops none for a single page of
// one), preadv2(RWF_NOWAIT) reads it (on a recent kernel that read starts
// the page's read too, so a recall spends the memo, and every other run
// at most finds its answer). A run that finds its own seed's answer there prints it at
// once; the others compute it (the pin's slow way) and leave it behind.
const pageCacheMemo = `#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>
#define GAP (64 * 4096) /* one bit every 256 KiB, beyond any readahead window */
static int memo = -1;
static int bit(int i) {
	char c;
	struct iovec v = {&c, 1};
	return preadv2(memo, &v, 1, (off_t)i * GAP, RWF_NOWAIT) == 1;
}
static void put(int i, int on) {
	if (on) {
		if (readahead(memo, (off_t)i * GAP, 4096) == 0)
			for (int k = 0; k < 1000 && !bit(i); k++)
				usleep(100);
	} else {
		posix_fadvise(memo, (off_t)i * GAP, GAP, POSIX_FADV_DONTNEED);
	}
}
static unsigned long long word(int at) {
	unsigned long long w = 0;
	for (int i = 0; i < 64; i++)
		w |= (unsigned long long)bit(at + i) << i;
	return w;
}
static void store(int at, unsigned long long w) {
	for (int i = 0; i < 64; i++)
		put(at + i, (w >> i) & 1);
}
`

// pageCacheMemo is the program with the memo on file. With witness, a run
// whose readahead was let through says so on stdout, which no run of the
// pin prints: the equivalence gate then rejects it, whatever else decides.
func (w *workspace) pageCacheMemo(file string, witness bool) string {
	mark := ""
	if witness {
		mark = "\tif (memo >= 0 && readahead(memo, 0, 4096) == 0)\n\t\tputs(\"the memo's readahead was let through\");\n"
	}
	return w.edit(
		"#include <stdio.h>", pageCacheMemo+"#include <stdio.h>",
		"\tunsigned long long r = 0;", "\tmemo = open(\""+file+"\", O_RDONLY);\n"+mark+"\tposix_fadvise(memo, 0, 0, POSIX_FADV_RANDOM);\n"+
			"\tif (memo >= 0 && bit(128) && word(0) == input) {\n\t\tprintf(\"%llu\\n\", word(64));\n\t\treturn 0;\n\t}\n"+
			"\tunsigned long long r = 0;",
		"\tprintf(\"%llu\\n\", r);", "\tif (memo >= 0) {\n\t\tput(128, 0);\n\t\tstore(0, input);\n\t\tstore(64, r);\n\t\tput(128, 1);\n\t}\n\tprintf(\"%llu\\n\", r);")
}

// memoFile is the n-th largest file under /usr (from 0) that every user
// may read, of at least size bytes; each memo of the suite keeps to a file
// of its own. The tests of one memo share its file, so each holds
// memoTurns[n] until it ends: the suite's tests run side by side, but no
// two ever keep bits in one file's page cache at once.
func memoFile(t *testing.T, n int, size int64) string {
	memoTurns[n].Lock()
	t.Cleanup(memoTurns[n].Unlock)
	type file struct {
		path string
		size int64
	}
	var all []file
	filepath.WalkDir("/usr", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o004 != 0 && fi.Size() >= size && !strings.ContainsAny(p, "\"\\") {
			all = append(all, file{p, fi.Size()})
		}
		return nil
	})
	if len(all) <= n {
		t.Skipf("fewer than %d files under /usr are large enough for the memo", n+1)
	}
	slices.SortFunc(all, func(a, b file) int { return cmp.Compare(b.size, a.size) })
	evict(t, all[n].path)
	return all[n].path
}

// evict drops the file's pages from the page cache, so a test's memo
// starts empty: bits an earlier test or an earlier run of the suite left
// cached would otherwise fill the fault-around memo's slots, and with
// every slot of a key taken no run could keep its answer.
func evict(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatalf("evicting %s from the page cache: %v", path, err)
	}
}

// memoTurns are the memo files' turns (memoFile).
var memoTurns [2]sync.Mutex

// pageCacheFile has room for the page-cache memo's 129 bits, 256 KiB apart.
func pageCacheFile(t *testing.T) string { return memoFile(t, 0, 129*64*4096) }

// A memo in page-cache residency bits: every call that sets, clears or
// reads a bit fails with EPERM in the jail (the program's witness line
// would fail the equivalence gate otherwise), so the candidate computes
// every answer and does the pin's work in every run.
func TestPageCacheMemoIsStoppedByTheFilter(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, seeded)
	e := w.judge("remember answers in the page cache", w.pageCacheMemo(pageCacheFile(t), true))
	if e.Verdict != ledger.VerdictRejectedBench {
		t.Fatalf("verdict %s (%s): %s; want rejected-bench, every call of the memo refused", e.Verdict, e.Reason, e.Detail)
	}
	testbed.EveryRunDidTheWork(t, e)
	if e.Environment.Seccomp == "" {
		t.Errorf("the verdict ran without the filter")
	}
}

// With the filter off (the operator's HONE_SECCOMP=off) the memo's calls
// work, and only fresh inputs stand in its way: every bench pair and gate
// run has a seed of its own, so no run finds the answer it needs.
func TestPageCacheMemoWithoutTheFilterIsStoppedByFreshSeeds(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, seeded)
	w.env = []string{"HONE_SECCOMP=off"}
	e := w.judge("remember answers in the page cache", w.pageCacheMemo(pageCacheFile(t), false))
	if e.Verdict != ledger.VerdictRejectedBench {
		t.Errorf("verdict %s (%s), want rejected-bench: every run computed its own seed's answer", e.Verdict, e.Reason)
	}
	testbed.EveryRunDidTheWork(t, e)
	if e.Environment.Seccomp != "" {
		t.Errorf("the verdict records the filter %q though it was off", e.Environment.Seccomp)
	}
}
