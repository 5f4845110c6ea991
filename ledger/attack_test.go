package ledger_test

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// forgeIndex drops every index line naming id and fixes the header's line
// count and checksum, as someone who read FORMAT.md would.
func forgeIndex(t *testing.T, dir, id string) {
	t.Helper()
	p := filepath.Join(dir, ".git", "hone", "ledger.index")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := bytes.Cut(b, []byte("\n"))
	var kept []byte
	dropped := 0
	for _, line := range bytes.SplitAfter(body, []byte("\n")) {
		if bytes.Contains(line, []byte(id)) {
			dropped++
			continue
		}
		kept = append(kept, line...)
	}
	if dropped == 0 {
		t.Fatalf("the index has no line naming %s", id)
	}
	f := strings.Split(string(head), "\t")
	f[4] = fmt.Sprint(bytes.Count(kept, []byte("\n")))
	f[5] = fmt.Sprintf("%08x", crc32.ChecksumIEEE(kept))
	if err := os.WriteFile(p, append([]byte(strings.Join(f, "\t")+"\n"), kept...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The attack of issue 14: an edited index (count and CRC fixed) hid a
// verdict, and the same attempt was proposed and judged again. The index
// must list the tip's tree exactly, or it is rebuilt.
func TestAForgedIndexCannotHideAVerdict(t *testing.T) {
	dir, l, p, v := judgedLedger(t)
	if a, err := l.Attempts(ctx, ledger.Filter{AttemptKey: p.AttemptKey}); err != nil || len(a) != 1 || a[0].Outcome() == nil {
		t.Fatalf("before the forgery: %+v, %v", a, err)
	}
	forgeIndex(t, dir, v.ID)
	fresh := openLedger(t, dir)
	a, err := fresh.Attempts(ctx, ledger.Filter{AttemptKey: p.AttemptKey})
	if err != nil || len(a) != 1 || a[0].Outcome() == nil || a[0].Outcome().ID != v.ID {
		t.Fatalf("after the forgery, the attempt = %+v, %v; want its verdict %s", a, err, v.ID)
	}
	if rows, err := openLedger(t, dir).Rows(ctx, ledger.Filter{Kind: ledger.KindVerdict}); err != nil || len(rows) != 1 {
		t.Fatalf("verdict rows after the forgery: %+v, %v", rows, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "hone", "ledger.index")); !bytes.Contains(b, []byte(v.ID)) {
		t.Fatal("the forged index was not rebuilt")
	}
}

// The attack of issue 14: the ledger branch replaced by one root commit that
// holds the same entries with a verdict changed to accepted. Nothing in its
// own history is wrong; only the records of what it held show it.
func TestVerifyReportsAReplacedRoot(t *testing.T) {
	dir := newRepo(t)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "p1")
	appendOK(t, l, &p)
	v := verdictFor(p, ledger.VerdictRejectedBench, "no change")
	appendOK(t, l, v)
	assertSound(t, dir, l)
	vp := ledger.EntryPath(v.Target, v.Kind, v.ID)
	raw := testgit.Git(t, dir, "show", "hone/ledger:"+vp) + "\n"
	scratch := testgit.Cmd{Dir: dir, Env: []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}}
	scratch.Git(t, "read-tree", "hone/ledger")
	scratch.Stdin = strings.Replace(raw, `verdict = "rejected-bench"`, `verdict = "accepted"`, 1)
	blob := scratch.Git(t, "hash-object", "-w", "--stdin")
	scratch.Stdin = ""
	scratch.Git(t, "update-index", "--cacheinfo", "100644,"+blob+","+vp)
	root := scratch.Git(t, "commit-tree", scratch.Git(t, "write-tree"), "-m", "hone: start the ledger")
	testgit.Git(t, dir, "update-ref", "refs/heads/hone/ledger", root)

	rep, err := openLedger(t, dir).Verify(ctx, ledger.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ledger.ProblemRewritten: "refs/heads/hone/ledger", ledger.ProblemModified: vp}
	for kind, where := range want {
		if !hasProblem(rep, kind, where) {
			t.Errorf("no %s problem at %s in %+v", kind, where, rep.Problems)
		}
	}
	// verify --repair never blesses it; a second plain verify still reports it.
	if _, err := openLedger(t, dir).RepairNotes(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err := openLedger(t, dir).Verify(ctx, ledger.VerifyOptions{}); err != nil || !hasProblem(rep, ledger.ProblemRewritten, "refs/heads/hone/ledger") {
		t.Fatalf("after repair: %+v, %v", rep, err)
	}
}

// The attack of issue 14: the last verdict dropped by moving the branch
// back one commit. hone's anchor still names the tip with the verdict, and
// the reflog still shows the move.
func TestVerifyReportsADroppedLastVerdict(t *testing.T) {
	for _, how := range []string{"update-ref", "ref file written directly", "anchor deleted too"} {
		t.Run(how, func(t *testing.T) {
			dir, l, _, _ := judgedLedger(t)
			q := makePatch(t, dir, "p9")
			appendOK(t, l, &q)
			v := verdictFor(q, ledger.VerdictRejectedBench, "slower")
			appendOK(t, l, v)
			assertSound(t, dir, l)
			back := testgit.Git(t, dir, "rev-parse", "hone/ledger~1")
			switch how {
			case "update-ref":
				testgit.Git(t, dir, "update-ref", "refs/heads/hone/ledger", back)
			default:
				if err := os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "hone", "ledger"), []byte(back+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if how == "anchor deleted too" {
					os.Remove(filepath.Join(dir, ".git", "hone", "ledger.anchor"))
				}
			}
			rep, err := openLedger(t, dir).Verify(ctx, ledger.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if vp := ledger.EntryPath(v.Target, v.Kind, v.ID); !hasProblem(rep, ledger.ProblemDeleted, vp) || !hasProblem(rep, ledger.ProblemRewritten, "refs/heads/hone/ledger") {
				t.Fatalf("the dropped verdict %s is not reported: %+v", vp, rep.Problems)
			}
		})
	}
}

func hasProblem(rep *ledger.VerifyReport, kind, path string) bool {
	for _, p := range rep.Problems {
		if p.Kind == kind && p.Path == path {
			return true
		}
	}
	return false
}
