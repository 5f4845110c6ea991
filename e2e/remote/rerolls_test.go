package remote

import (
	"fmt"
	"strings"
	"testing"
)

// An agent proposes a patch, then eight more patch ids whose refs hold the
// very same commit (and one a new commit of the same tree), each with a
// proposal entry, to have one commit judged on nine seeds. The server
// refuses them. Planted on the server without its hook (a ledger from
// before it), they still get one verdict: the runner judges each patch
// commit once and says which ids it skipped.
func TestEightPatchIDsForOneCommitGetOneVerdict(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 20)
	agent, id := w.pushedProposal()
	before := w.serverRefs()
	commit := strings.TrimSpace(w.must(agent, "git", "rev-parse", "refs/hone/patches/"+id))
	_, body := w.entry(agent, "proposal", id)
	files := map[string]string{}
	push := []string{"git", "push", "origin", "hone/ledger"}
	for n := 1; n <= 8; n++ {
		other := fmt.Sprintf("%016x", 0xa11ce0000+n)
		p, forged := rewrite(body, n, `patch_id = "`+id+`"`, `patch_id = "`+other+`"`)
		files[p] = forged
		w.must(agent, "git", "update-ref", "refs/hone/patches/"+other, commit)
		push = append(push, "refs/hone/patches/"+other+":refs/hone/patches/"+other)
	}
	base := strings.TrimSpace(w.must(agent, "git", "rev-parse", "refs/heads/hone/ledger"))
	eight := w.plant(agent, base, files)
	w.refused(agent, "is already patch "+id+"; one patch commit is one attempt", push...)

	// The same tree in a commit of its own.
	pin := strings.TrimSpace(w.must(agent, "git", "rev-parse", commit+"^"))
	twin := strings.TrimSpace(w.must(agent, "git", "commit-tree", commit+"^{tree}", "-p", pin, "-m", "twin"))
	w.must(agent, "git", "update-ref", "refs/hone/patches/00000000000000b1", twin)
	p, forged := rewrite(body, 9, `patch_id = "`+id+`"`, `patch_id = "00000000000000b1"`, `commit = "`+commit+`"`, `commit = "`+twin+`"`)
	w.plant(agent, base, map[string]string{p: forged})
	w.refused(agent, "has the tree of patch "+id, "git", "push", "origin", "hone/ledger", "refs/hone/patches/00000000000000b1:refs/hone/patches/00000000000000b1")
	if after := w.serverRefs(); after != before {
		t.Fatalf("the server's refs changed:\n%s\nwas\n%s", after, before)
	}

	// Planted without the hook: one verdict, eight skipped.
	w.must(agent, "git", "update-ref", "refs/heads/hone/ledger", eight)
	w.must(w.server, append([]string{"git", "fetch", "-q", agent, "refs/heads/hone/ledger:refs/heads/hone/ledger"}, push[4:]...)...)
	runner := w.clone("runner", "runner")
	js := w.runnerLoop(runner)
	if got := verdicts(js); len(js) != 9 || got["skipped"] != 8 || got["rejected-gate"] != 1 {
		t.Fatalf("the runner's judgements: %+v", js)
	}
	if js := w.runnerLoop(runner); verdicts(js)["skipped"] != 8 || len(js) != 8 {
		t.Fatalf("the second loop: %+v", js)
	}
}
