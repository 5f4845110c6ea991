package patch

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// verdictEntry stands for the verdict package's entry: any struct embedding
// ledger.Common with Kind verdict.
type verdictEntry struct {
	ledger.Common
}

func readLegit(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/legit/" + name + ".diff")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProposeIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	req := Request{Target: "t", Hotspot: "A", Class: 3, Hypothesis: "Return ten: a constant is cheaper.", Diff: readLegit(t, "modify")}
	first, err := Propose(ctx, ws, req)
	if err != nil || first.Existing {
		t.Fatalf("first proposal: %+v, %v", first, err)
	}
	if len(first.PatchID) != 16 || first.Proposal.DiffSHA256 == "" || first.Proposal.Pin == "" || first.Proposal.AttemptKey == "" {
		t.Fatalf("proposal fields missing: %+v", first.Proposal)
	}
	again, err := Propose(ctx, ws, req)
	if err != nil || !again.Existing || again.PatchID != first.PatchID || again.Commit != first.Commit {
		t.Fatalf("second proposal: %+v, %v; want the existing %s", again, err, first.PatchID)
	}
	// Another hypothesis for the very same diff is still the same patch.
	other := req
	other.Hypothesis = "something else entirely"
	if res, err := Propose(ctx, ws, other); err != nil || res.PatchID != first.PatchID || !res.Existing {
		t.Fatalf("same diff, other words: %+v, %v", res, err)
	}
	entries, err := ledger.Open(ws).List(ctx, ledger.Filter{Kind: ledger.KindProposal})
	if err != nil || len(entries) != 1 {
		t.Fatalf("want exactly one proposal entry, got %d (%v)", len(entries), err)
	}
	list, err := List(ctx, ws, "t")
	if err != nil || len(list) != 1 || list[0].Files[0] != "targets/t/lib.go" || list[0].Added != 1 || list[0].Removed != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
}

func TestAttemptWithVerdictIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	l := ledger.Open(ws)
	res, err := Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 3, Hypothesis: "Return ten: a constant is cheaper.", Diff: readLegit(t, "modify")})
	if err != nil {
		t.Fatal(err)
	}
	v := &verdictEntry{Common: res.Proposal.Common}
	v.ID, v.Created, v.Kind = "", time.Time{}, ledger.KindVerdict
	v.Verdict, v.Summary = ledger.VerdictRejectedBench, "no change"
	stored, err := l.Append(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	// A different diff for the same idea, spelled with other case and
	// punctuation, is the same attempt.
	_, err = Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 3, Hypothesis: "return TEN -- a constant is cheaper!", Diff: readLegit(t, "add")})
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), stored.ID) || !strings.Contains(err.Error(), "rejected-bench") {
		t.Fatalf("want a policy refusal naming entry %s and its verdict, got %v", stored.ID, err)
	}
	// Re-proposing the judged diff itself is refused too.
	if _, err := Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 3, Hypothesis: "Return ten: a constant is cheaper.", Diff: readLegit(t, "modify")}); !errs.Is(err, errs.Policy) {
		t.Fatalf("judged attempt re-proposed: %v", err)
	}
	// Another class is another idea.
	if _, err := Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 4, Hypothesis: "Return ten: a constant is cheaper.", Diff: readLegit(t, "add")}); err != nil {
		t.Fatalf("other class refused: %v", err)
	}
	sh, err := Show(ctx, ws, res.PatchID[:6])
	if err != nil || len(sh.Verdicts) != 1 || sh.Verdicts[0].Verdict != ledger.VerdictRejectedBench || !strings.Contains(sh.Diff, "+\treturn 10") {
		t.Fatalf("show: %+v, %v", sh, err)
	}
}

func TestSimilarHypothesisWarns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	if _, err := Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 2, Hypothesis: "cache the result of A in a package variable", Diff: readLegit(t, "modify")}); err != nil {
		t.Fatal(err)
	}
	res, err := Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 2, Hypothesis: "cache the result of A in a package level variable", Diff: readLegit(t, "add")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Code != "similar_hypothesis" || !strings.Contains(res.Warnings[0].Message, "similar earlier hypothesis") {
		t.Fatalf("warnings: %q", res.Warnings)
	}
	res, err = Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 5, Hypothesis: "cache the result of A in a package level var", Diff: readLegit(t, "delete")})
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("other class must not warn: %q, %v", res.Warnings, err)
	}
}

func TestProposeValidatesTheIdea(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	diff := readLegit(t, "modify")
	for _, c := range []struct {
		name string
		req  Request
		code errs.Code
	}{
		{"class zero", Request{Target: "t", Hotspot: "A", Class: 0, Hypothesis: "h", Diff: diff}, errs.Usage},
		{"class eight", Request{Target: "t", Hotspot: "A", Class: 8, Hypothesis: "h", Diff: diff}, errs.Usage},
		{"no hotspot", Request{Target: "t", Hotspot: " ", Class: 1, Hypothesis: "h", Diff: diff}, errs.Usage},
		{"punctuation-only hypothesis", Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "?!", Diff: diff}, errs.Usage},
		{"unknown target", Request{Target: "nope", Hotspot: "A", Class: 1, Hypothesis: "h", Diff: diff}, errs.NotFound},
		{"empty diff", Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "h", Diff: []byte("\n")}, errs.Invalid},
		{"not a diff", Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "h", Diff: []byte("hello\n")}, errs.Invalid},
		{"does not apply", Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "h", Diff: []byte(strings.ReplaceAll(string(diff), "return 1", "return 7"))}, errs.Invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Propose(context.Background(), ws, c.req); errs.CodeOf(err) != c.code {
				t.Fatalf("want code %d, got %v", c.code, err)
			}
		})
	}
}

func TestDefaultSizeLimit(t *testing.T) {
	t.Parallel()
	files := fixtureFiles()
	files["hone.toml"] = fileSpec{"100644", strings.Replace(fixtureToml, "max_diff_bytes = 65536\n", "", 1)}
	ws := newFixture(t, files)
	big := "diff --git a/targets/t/big.txt b/targets/t/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/targets/t/big.txt\n@@ -0,0 +1,400000 @@\n" + strings.Repeat("+0123456789abcdef\n", 400000)
	_, err := Check(context.Background(), ws, "t", []byte(big))
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "over the limit of 4194304") {
		t.Fatalf("want the 4 MiB limit, got %v", err)
	}
}

// A target whose directory does not exist at the pin yet is patched through
// a whole-tree index.
func TestProposeIntoNewTargetDirectory(t *testing.T) {
	t.Parallel()
	files := fixtureFiles()
	files["hone.toml"] = fileSpec{"100644", fixtureToml + "\n[targets.fresh]\npath = \"targets/fresh\"\npin = \"main\"\n"}
	ws := newFixture(t, files)
	diff := "diff --git a/targets/fresh/a.c b/targets/fresh/a.c\nnew file mode 100644\n--- /dev/null\n+++ b/targets/fresh/a.c\n@@ -0,0 +1 @@\n+int a;\n"
	res, err := Propose(context.Background(), ws, Request{Target: "fresh", Hotspot: "a", Class: 1, Hypothesis: "start", Diff: []byte(diff)})
	if err != nil {
		t.Fatal(err)
	}
	if got := testgit.Git(t, ws.Root, "diff-tree", "-r", "--name-status", "--no-commit-id", res.Commit+"^", res.Commit); got != "A\ttargets/fresh/a.c" {
		t.Fatalf("changes: %q", got)
	}
	escape := strings.Replace(diff, "targets/fresh/a.c", "targets/t/a.c", -1)
	if _, err := Check(context.Background(), ws, "fresh", []byte(escape)); !errs.Is(err, errs.Policy) {
		t.Fatalf("write into another target accepted: %v", err)
	}
}

// The authority check does not trust the front check: even when git is
// handed a diff that writes outside the target, the partial index reports
// that change and it is refused, not silently dropped by the splice.
func TestPartialApplyReportsChangesOutsideTheTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	pin := testgit.Git(t, ws.Root, "rev-parse", "main")
	root, ok := subtree(ws.Store(""), pin, "targets/t")
	if !ok {
		t.Fatal("no target tree at the pin")
	}
	idx, err := newScratchIndex(ctx, ws.Repo)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.close()
	diff := "diff --git a/targets/t/a.c b/targets/t/a.c\nnew file mode 100644\n--- /dev/null\n+++ b/targets/t/a.c\n@@ -0,0 +1 @@\n+int a;\n" +
		"diff --git a/secret2.txt b/secret2.txt\nnew file mode 100644\n--- /dev/null\n+++ b/secret2.txt\n@@ -0,0 +1 @@\n+x\n"
	_, changes, err := idx.applyPartial(ctx, ws.Store(""), pin, "targets/t", root, []byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	if err := authority(changes, ws.Config.Targets["t"].Rules()); !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "secret2.txt") {
		t.Fatalf("want secret2.txt refused, got %v (changes %+v)", err, changes)
	}
}

// Eight proposals of one diff at once, in one clone, store one patch and
// one proposal entry: every other proposer is answered with it.
func TestConcurrentProposalsOfOneDiffWriteOneEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	req := Request{Target: "t", Hotspot: "A", Class: 3, Hypothesis: "Return ten: a constant is cheaper.", Diff: readLegit(t, "modify")}
	const n = 8
	results := make(chan *Result, n)
	failures := make(chan error, n)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			res, err := Propose(ctx, ws, req)
			if err != nil {
				failures <- err
				return
			}
			results <- res
		}()
	}
	close(start)
	fresh := 0
	var id string
	for range n {
		select {
		case err := <-failures:
			t.Fatal(err)
		case res := <-results:
			if !res.Existing {
				fresh++
			}
			id = res.PatchID
		}
	}
	entries, err := ledger.Open(ws).ByPatch(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	proposals := 0
	for _, e := range entries {
		if e.Kind == ledger.KindProposal {
			proposals++
		}
	}
	if fresh != 1 || proposals != 1 {
		t.Errorf("%d proposers were told theirs is new, %d proposal entries; want 1 and 1", fresh, proposals)
	}
}
