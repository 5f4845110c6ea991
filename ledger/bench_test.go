package ledger_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/ledger"
)

// The whole-process benchmarks time a built hone binary against a git command
// doing comparable work, interleaved in the same loop so both see the same
// machine load, and report both and their ratio. Build the binary with
// scripts/bench-ledger.sh (it needs -tags honebench for the append command).
func honeBin(b *testing.B) string {
	bin := os.Getenv("HONE_BENCH_BIN")
	if bin == "" {
		b.Skip("set HONE_BENCH_BIN to a hone built with -tags honebench; see scripts/bench-ledger.sh")
	}
	return bin
}

// cost is what one or more whole processes took: wall time, and CPU time
// (user+sys from rusage), which a loaded shared machine distorts far less.
type cost struct{ wall, cpu time.Duration }

func (c *cost) add(d cost) { c.wall += d.wall; c.cpu += d.cpu }

// timeRun runs the command and returns what the whole process cost.
func timeRun(b *testing.B, dir string, name string, args ...string) cost {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return cost{wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

func report(b *testing.B, hone, git cost) {
	b.ReportMetric(msPerOp(b, hone.wall), "hone-wall-ms/op")
	b.ReportMetric(msPerOp(b, git.wall), "git-wall-ms/op")
	b.ReportMetric(float64(hone.wall)/float64(git.wall), "wall-hone/git")
	b.ReportMetric(msPerOp(b, hone.cpu), "hone-cpu-ms/op")
	b.ReportMetric(msPerOp(b, git.cpu), "git-cpu-ms/op")
	b.ReportMetric(float64(hone.cpu)/float64(git.cpu), "cpu-hone/git")
	b.ReportMetric(0, "ns/op")
}

func msPerOp(b *testing.B, d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000 / float64(b.N)
}

// BenchmarkAppendProcess: one entry appended by a whole hone process, against
// `git notes add`, which also writes a blob, a tree and a commit and moves a
// ref. With HONE_BENCH_FLOOR set (scripts/bench-ledger.sh sets it), it also
// times testdata/floor, a process that links hone's libraries and does
// nothing, in the same loop: the part of hone's figure no change to hone's
// own code can remove.
func BenchmarkAppendProcess(b *testing.B) {
	bin := honeBin(b)
	floorBin := os.Getenv("HONE_BENCH_FLOOR")
	dir := newRepo(b)
	var hone, git, floor cost
	for i := 0; i < b.N; i++ {
		hone.add(timeRun(b, dir, bin, "bench-append", "demo"))
		git.add(timeRun(b, dir, "git", "notes", "--ref=refs/notes/bench", "add", "-f", "-m", fmt.Sprintf("note %d", i), "HEAD"))
		if floorBin != "" {
			floor.add(timeRun(b, dir, floorBin, "noop"))
		}
	}
	report(b, hone, git)
	if floorBin != "" {
		b.ReportMetric(msPerOp(b, floor.wall), "floor-wall-ms/op")
		b.ReportMetric(float64(floor.wall)/float64(git.wall), "wall-floor/git")
	}
}

// BenchmarkAppendProcessSigned: as BenchmarkAppendProcess, with
// hone.signingkey set, so each append also runs one `ssh-keygen -Y sign`.
func BenchmarkAppendProcessSigned(b *testing.B) {
	bin := honeBin(b)
	dir := newRepo(b)
	key := filepath.Join(b.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		b.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "config", "hone.signingkey", key).CombinedOutput(); err != nil {
		b.Fatalf("git config: %v\n%s", err, out)
	}
	var hone, git cost
	for i := 0; i < b.N; i++ {
		hone.add(timeRun(b, dir, bin, "bench-append", "demo"))
		git.add(timeRun(b, dir, "git", "notes", "--ref=refs/notes/bench", "add", "-f", "-m", fmt.Sprintf("note %d", i), "HEAD"))
	}
	report(b, hone, git)
}

// BenchmarkLookup10k: the entries of one attempt key among 10,000, as a whole
// `hone ledger list --attempt-key` process (warm cache), against `git show` of
// a path already known.
func BenchmarkLookup10k(b *testing.B) {
	bin := honeBin(b)
	dir, key, path := bigLedger(b, 10000)
	timeRun(b, dir, bin, "ledger", "list", "--attempt-key", key, "--json") // builds the cache
	b.ResetTimer()
	var hone, git cost
	for i := 0; i < b.N; i++ {
		hone.add(timeRun(b, dir, bin, "ledger", "list", "--attempt-key", key, "--json"))
		git.add(timeRun(b, dir, "git", "show", "hone/ledger:"+path))
	}
	report(b, hone, git)
}

// BenchmarkList10k: every one of 10,000 entries listed by a whole `hone
// ledger list` process (warm cache), against `git ls-tree -r` of the branch.
func BenchmarkList10k(b *testing.B) {
	bin := honeBin(b)
	dir, _, _ := bigLedger(b, 10000)
	timeRun(b, dir, bin, "ledger", "list")
	b.ResetTimer()
	var hone, git cost
	for i := 0; i < b.N; i++ {
		hone.add(timeRun(b, dir, bin, "ledger", "list"))
		git.add(timeRun(b, dir, "git", "ls-tree", "-r", "hone/ledger"))
	}
	report(b, hone, git)
}

// BenchmarkIndexRebuild10k: the one-off cost of building the cache from a
// branch of 10,000 entries, in process.
func BenchmarkIndexRebuild10k(b *testing.B) {
	dir, key, _ := bigLedger(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		os.Remove(dir + "/.git/hone/ledger.index")
		if got, err := openLedger(b, dir).Attempts(ctx, ledger.Filter{AttemptKey: key}); err != nil || len(got) != 1 {
			b.Fatalf("Attempts = %d attempts, %v", len(got), err)
		}
	}
}

// bigLedger writes n proposal entries in one commit with git fast-import, and
// returns the workspace, the attempt key of one entry and that entry's path.
func bigLedger(b testing.TB, n int) (dir, key, path string) {
	dir = newRepo(b)
	var in strings.Builder
	fmt.Fprintf(&in, "commit refs/heads/hone/ledger\ncommitter hone <hone@localhost> 1700000000 +0000\ndata 5\nbulk\n")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		created := t0.Add(time.Duration(i) * time.Second)
		var r [10]byte
		rand.Read(r[:])
		id := fmt.Sprintf("%012x%s", created.UnixMilli(), hex.EncodeToString(r[:]))
		hyp := fmt.Sprintf("idea number %d", i)
		k := ledger.AttemptKey("demo", "hot", 3, hyp)
		body := fmt.Sprintf("schema = 1\nid = %q\nkind = \"proposal\"\ntarget = \"demo\"\ncreated = %s\npatch_id = \"p%d\"\nattempt_key = %q\nhotspot = \"hot\"\nclass = 3\nhypothesis = %q\n",
			id, created.Format(time.RFC3339), i, k, hyp)
		p := ledger.EntryPath("demo", ledger.KindProposal, id)
		fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", p, len(body), body)
		if i == n/2 {
			key, path = k, p
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	return dir, key, path
}

// BenchmarkStartup: the floor under every whole-process figure above, `hone
// version` against `git rev-parse HEAD`.
func BenchmarkStartup(b *testing.B) {
	bin := honeBin(b)
	dir := newRepo(b)
	var hone, git cost
	for i := 0; i < b.N; i++ {
		hone.add(timeRun(b, dir, bin, "version"))
		git.add(timeRun(b, dir, "git", "rev-parse", "HEAD"))
	}
	report(b, hone, git)
}

// BenchmarkByAttemptKey10k: the in-process lookup the patch code makes before
// a proposal (the attempts of one key, with their verdicts), on a fresh
// Ledger each time (warm cache, checked against the tip).
func BenchmarkByAttemptKey10k(b *testing.B) {
	dir, key, _ := bigLedger(b, 10000)
	if _, err := openLedger(b, dir).Attempts(ctx, ledger.Filter{AttemptKey: key}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got, err := openLedger(b, dir).Attempts(ctx, ledger.Filter{AttemptKey: key}); err != nil || len(got) != 1 {
			b.Fatalf("Attempts = %d attempts, %v", len(got), err)
		}
	}
}
