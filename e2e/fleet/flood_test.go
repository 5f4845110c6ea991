package fleet

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// One agent floods the queue: 200 real proposals, pushed through the
// server's hook, before two other agents propose one each. Rounds of
// `hone runner --once` (what a CI job runs) judge the others' proposals
// within the first three rounds, one turn each after the flood's oldest:
// the queue is oldest first per agent, round robin across agents, so the
// flood delays them by one verdict and never starves them. The rest of the
// flood stays queued, to be judged in its turns.
func TestAFloodOfProposalsDelaysButNeverStarvesOtherAgents(t *testing.T) {
	const flood = 200
	f := newFixture(t, 1)
	flooder := f.agent("flooder")
	honest := []string{f.agent("alice"), f.agent("bob")}

	var wg sync.WaitGroup
	const workers = 4
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < flood; i += workers {
				f.propose(flooder, fmt.Sprintf("flood %d", i), patch(fmt.Sprintf(`int main(void) { puts("1"); return %d - %d; }`, i, i)))
			}
		}()
	}
	wg.Wait()
	f.must(flooder, "hone", "ledger", "push")
	if refs := f.serverRefs("refs/hone/patches/"); len(refs) != flood {
		t.Fatalf("the server holds %d patch refs, want the flood's %d", len(refs), flood)
	}

	ids := make([]string, len(honest))
	for i, dir := range honest {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = f.publish(dir, "honest idea", patch(fmt.Sprintf(`int main(void) { fputs("1\n", stdout); return %d - %d; }`, i, i)))
		}()
	}
	wg.Wait()
	if n := len(f.entries(f.clone("census", ""), "proposal")); n != flood+len(honest) {
		t.Fatalf("the server's ledger holds %d proposals, want %d", n, flood+len(honest))
	}

	runner := f.clone("runner0", f.keys[0])
	waiting := map[string]bool{}
	for _, id := range ids {
		waiting[id] = true
	}
	var judged []string
	for round := 1; round <= len(honest)+1 && len(waiting) > 0; round++ {
		out := f.must(runner, "hone", "runner", "--once", "--name", "runner0", "--class", "flood-ci")
		fields := strings.Fields(out)
		if len(fields) < 2 || strings.Contains(out, "not judged") {
			t.Fatalf("round %d judged nothing: %q", round, out)
		}
		judged = append(judged, fields[0])
		delete(waiting, fields[0])
	}
	if len(waiting) > 0 {
		t.Fatalf("after %d rounds (judged %v) the other agents' proposals %v still wait behind the flood", len(judged), judged, waiting)
	}

	verdicts := f.entries(f.clone("fresh", ""), "verdict")
	if len(verdicts) != len(judged) {
		t.Fatalf("the server's ledger has %d verdicts after %d rounds: %+v", len(verdicts), len(judged), verdicts)
	}
	for _, v := range verdicts {
		if v.Class != "flood-ci" || v.Trusted == nil || !*v.Trusted {
			t.Errorf("verdict %+v: want trusted and judged by runner class flood-ci", v)
		}
	}
	// Every view shows the runner class: the list's RUNNER column.
	list := f.must(runner, "hone", "ledger", "list", "--kind", "verdict")
	if !regexp.MustCompile(`(?m)^ID .* SIGNER +RUNNER +HYPOTHESIS$`).MatchString(list) ||
		len(regexp.MustCompile(`(?m) runner0@fleet +flood-ci +`).FindAllString(list, -1)) != len(judged) {
		t.Errorf("hone ledger list does not show each verdict's runner class:\n%s", list)
	}
	if claims := f.serverRefs("refs/hone/claims/"); len(claims) != 0 {
		t.Errorf("claims left behind: %v", claims)
	}
}
