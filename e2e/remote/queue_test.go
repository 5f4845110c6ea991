package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An honest agent pushes a proposal; then an attacker pushes three
// proposals of correct candidates that sleep on every run, backdated to
// 2001 so that an order by their created field would put them first. The
// runner's queue is by arrival and round robin across proposers, with
// [guard] max_queued = 2: the honest proposal is judged first, the
// attacker gets two turns, and its third waits.
func TestBackdatedSlowProposalsDoNotStarveAnHonestAgent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 2)
	honest := w.clone("honest", "honest")
	id := w.propose(honest, `puts("2");`, "print two")
	w.must(honest, "hone", "ledger", "push")

	agent := w.clone("agent", "agent")
	base := strings.TrimSpace(w.must(agent, "git", "rev-parse", "refs/heads/hone/ledger"))
	files := map[string]string{}
	push := []string{"git", "push", "origin", "hone/ledger"}
	var slow []string
	for n := 1; n <= 3; n++ {
		sid := w.propose(agent, fmt.Sprintf(`usleep(%d); puts("1");`, 50000+n), fmt.Sprintf("sleep %d", n))
		slow = append(slow, sid)
		_, body := w.entry(agent, "proposal", sid)
		p, backdated := rewrite(body, n)
		files[p] = backdated
		push = append(push, "refs/hone/patches/"+sid+":refs/hone/patches/"+sid)
	}
	w.plant(agent, base, files)
	w.must(agent, push...)

	runner := w.clone("runner", "runner")
	js := w.runnerLoop(runner)
	var judged []string
	skipped := 0
	for _, j := range js {
		switch {
		case j.Entry != nil:
			judged = append(judged, j.PatchID)
		case j.Skipped && strings.Contains(j.Error, "max_queued"):
			skipped++
		}
	}
	if len(judged) != 3 || judged[0] != id || skipped != 1 {
		t.Fatalf("want %s judged first, two of %v after it and one held back by max_queued: %+v", id, slow, js)
	}
	if js := w.runnerLoop(runner); len(js) != 1 || js[0].Entry == nil {
		t.Fatalf("the next loop judges the proposal held back: %+v", js)
	}
}

// An agent whose proposal was made before an honest one reached the server
// pushes a merge that takes its own ledger as the first parent, so that
// the ledger's first-parent history would list its entry first. The server
// refuses it; hone ledger push, which merges onto the server's tip, goes
// through, and the runner judges the proposal that arrived first first.
func TestAMergeCannotPutItsOwnEntriesFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 4)
	agent := w.clone("agent", "agent")
	mine := w.propose(agent, `puts("4");`, "print four")
	honest := w.clone("honest", "honest")
	id := w.propose(honest, `puts("2");`, "print two")
	w.must(honest, "hone", "ledger", "push")

	w.must(agent, "git", "fetch", "-q", "origin", "hone/ledger")
	own := strings.TrimSpace(w.must(agent, "git", "rev-parse", "refs/heads/hone/ledger"))
	theirs := strings.TrimSpace(w.must(agent, "git", "rev-parse", "FETCH_HEAD"))
	p, _ := w.entry(agent, "proposal", mine)
	idx := filepath.Join(w.dir, "merge-index")
	os.Remove(idx)
	w.must(agent, "env", "GIT_INDEX_FILE="+idx, "git", "read-tree", theirs)
	blob := strings.TrimSpace(w.must(agent, "git", "rev-parse", own+":"+p))
	w.must(agent, "env", "GIT_INDEX_FILE="+idx, "git", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	tree := strings.TrimSpace(w.must(agent, "env", "GIT_INDEX_FILE="+idx, "git", "write-tree"))
	merge := strings.TrimSpace(w.must(agent, "git", "commit-tree", tree, "-p", own, "-p", theirs, "-m", "merge"))
	w.refused(agent, "on its first-parent history", "git", "push", "origin", merge+":refs/heads/hone/ledger", "refs/hone/patches/"+mine+":refs/hone/patches/"+mine)

	w.must(agent, "hone", "ledger", "push")
	runner := w.clone("runner", "runner")
	js := w.runnerLoop(runner)
	if len(js) != 2 || js[0].PatchID != id || js[1].PatchID != mine {
		t.Fatalf("want %s (arrived first), then %s: %+v", id, mine, js)
	}
}
