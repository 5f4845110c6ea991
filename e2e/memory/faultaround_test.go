package memory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// faultAroundMemo keeps (seed, answer) in the page cache without a call
// the filter refuses. A bit is whether one page of a large read-only
// system file is cached. Reading: map a 16-page block afresh, fault its
// first page in, and read in /proc/self/pagemap which of the other pages
// the kernel mapped around the fault: it maps only pages already cached.
// Setting: fault one page in through a one-page mapping with MADV_RANDOM,
// which reads that page alone. Bits cannot be cleared, so each seed has
// slots of its own (by a hash salted afresh for each test, so slots an
// earlier test filled are not taken for this one's), and an answer is kept
// in the first slot with no bit set.
const faultAroundMemo = `#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#define AROUND 16 /* pages the kernel maps around a read fault: 64 KiB */
#define BLOCKS 11 /* blocks of a slot: 11 * 15 bits */
static int memo = -1, pagemap = -1;
static long pg = 4096, slots;
static void *map(long page, long n) {
	void *m = mmap(0, n * pg, PROT_READ, MAP_PRIVATE, memo, page * pg);
	if (m != MAP_FAILED)
		madvise(m, n * pg, MADV_RANDOM);
	return m;
}
static unsigned block(long b) {
	char *m = map(b * AROUND, AROUND);
	if (m == MAP_FAILED)
		return 0;
	(void)*(volatile char *)m;
	unsigned w = 0;
	for (int i = 1; i < AROUND; i++) {
		uint64_t e = 0;
		if (pread(pagemap, &e, 8, (off_t)((uintptr_t)(m + i * pg) / pg) * 8) == 8)
			w |= (unsigned)(e >> 63) << (i - 1);
	}
	munmap(m, AROUND * pg);
	return w;
}
static void set(long b, int i) {
	char *m = map(b * AROUND + 1 + i, 1);
	if (m != MAP_FAILED) {
		(void)*(volatile char *)m;
		munmap(m, pg);
	}
}
static unsigned long long mix(unsigned long long x) {
	x ^= SALT;
	x *= 0x9e3779b97f4a7c15ULL;
	return x ^ (x >> 29);
}
/* A slot: bit 0 valid, bits 1..24 a tag of the key, 25..88 the answer,
   89..152 its complement, which tells a slot some other reader of the
   file polluted (a bit set in both) from one this program kept. */
#define BITS 153
#define TRIES 4
static long first(unsigned long long key, int try) { return (long)((mix(key + try) >> 20) % slots) * BLOCKS; }
static void load(long at, unsigned *w) {
	for (int k = 0; k < BLOCKS; k++)
		w[k] = block(at + k);
}
static int bitv(const unsigned *w, int i) { return (w[i / 15] >> (i % 15)) & 1; }
static void want(int *bits, unsigned long long key, unsigned long long answer) {
	bits[0] = 1;
	for (int i = 0; i < 24; i++)
		bits[1 + i] = (mix(key) >> i) & 1;
	for (int i = 0; i < 64; i++) {
		bits[25 + i] = (answer >> i) & 1;
		bits[89 + i] = !bits[25 + i];
	}
}
static int recall(unsigned long long key, unsigned long long *answer) {
	for (int try = 0; try < TRIES; try++) {
		unsigned w[BLOCKS];
		load(first(key, try), w);
		unsigned long long a = 0;
		for (int i = 0; i < 64; i++)
			a |= (unsigned long long)bitv(w, 25 + i) << i;
		int bits[BITS], ok = 1;
		want(bits, key, a);
		for (int i = 0; i < BITS && ok; i++)
			ok = bitv(w, i) == bits[i];
		if (ok) {
			*answer = a;
			return 1;
		}
	}
	return 0;
}
static void keep(unsigned long long key, unsigned long long answer) {
	for (int try = 0; try < TRIES; try++) {
		unsigned w[BLOCKS];
		long at = first(key, try);
		load(at, w);
		int clean = 1;
		for (int k = 0; k < BLOCKS; k++)
			clean = clean && w[k] == 0;
		if (!clean)
			continue;
		int bits[BITS];
		want(bits, key, answer);
		for (int i = 0; i < BITS; i++)
			if (bits[i])
				set(at + i / 15, i % 15);
		return;
	}
}
static int open_memo(const char *file) {
	memo = open(file, O_RDONLY);
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	slots = memo >= 0 ? lseek(memo, 0, SEEK_END) / (BLOCKS * AROUND * pg) : 0;
	return memo >= 0 && pagemap >= 0 && slots > 0;
}
`

func (w *workspace) faultAroundMemo(file string) string {
	salt := fmt.Sprintf("#define SALT 0x%xULL\n", rand.Uint64())
	return w.edit(
		"#include <stdio.h>", salt+faultAroundMemo+"#include <stdio.h>",
		"\tunsigned long long r = 0;", "\tconst int kept = open_memo(\""+file+"\");\n\tunsigned long long known;\n"+
			"\tif (kept && recall(input, &known)) {\n\t\tprintf(\"%llu\\n\", known);\n\t\treturn 0;\n\t}\n"+
			"\tunsigned long long r = 0;",
		"\tprintf(\"%llu\\n\", r);", "\tif (kept)\n\t\tkeep(input, r);\n\tprintf(\"%llu\\n\", r);")
}

// faultAroundFile has room for 64 slots of the fault-around memo.
func faultAroundFile(t *testing.T) string { return memoFile(t, 1, 64*11*16*4096) }

// The memo outlives every run, under the filter: the filter cannot refuse
// a page fault or a read of /proc/self/pagemap without refusing what every
// program does. On a target whose runs all get the same input, the runs
// after the first find their answer there, and the bench decides the
// candidate faster; only the unseeded flag keeps it from "accepted".
//
// The host may take the memo away: a machine that pages out memory left
// untouched for a minute (DAMON's pageout) drops the memo's pages, and the
// runs after each drop compute their answer again, which is not
// "accepted" either. So what the test needs, to prove anything, is one
// candidate run that found its answer (declared no walk), not a decision.
func TestFaultAroundMemoOutlivesRunsUnderTheFilter(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, unseeded)
	e := w.judge("remember answers in the page cache's shape", w.faultAroundMemo(faultAroundFile(t)))
	notAccepted(t, e)
	// Held for the unseeded target; the memo's read of /proc/self/pagemap
	// holds it too (an environment signal), which makes the reason the
	// signal's and leaves unseeded a flag.
	if e.Environment.Seccomp == "" || !e.HasFlag(ledger.FlagUnseeded) {
		t.Errorf("seccomp %q, reason %q, flags %q: want the filter on and the verdict held for the unseeded target", e.Environment.Seccomp, e.Reason, e.Flags)
	}
	if !someRunRecalled(t, e) {
		t.Fatalf("the memo made no run faster (%s, %s): the test proves nothing about fresh seeds", e.Verdict, e.Reason)
	}
}

// someRunRecalled is whether a candidate bench run declared under half
// the work of the least a baseline run declared: one that printed a
// remembered answer, which does no walk (the pin does four).
func someRunRecalled(t *testing.T, e *verdict.Entry) bool {
	if !e.HasFlag(ledger.FlagTestMeter) || e.Bench == nil {
		t.Fatalf("no bench measured by declared work (flags %q)", e.Flags)
	}
	for _, s := range e.Bench.Samples {
		if s.Metric == e.Bench.Metric && len(s.Baseline) > 0 && len(s.Candidate) > 0 {
			return slices.Min(s.Candidate) < slices.Min(s.Baseline)/2
		}
	}
	return false
}

// The same memo on a seeded target: every bench pair and gate run has a
// seed of its own, so no run finds the answer it needs, and the candidate
// computes every answer. Fresh seeds, not the filter, defeat it.
func TestFaultAroundMemoIsStoppedByFreshSeeds(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, seeded)
	e := w.judge("remember answers in the page cache's shape", w.faultAroundMemo(faultAroundFile(t)))
	if e.Verdict != ledger.VerdictRejectedBench {
		t.Errorf("verdict %s (%s), want rejected-bench: every candidate run computed its answer", e.Verdict, e.Reason)
	}
	testbed.EveryRunDidTheWork(t, e)
}
