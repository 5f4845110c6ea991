package fleet

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The whole fleet on one machine: 12 agent clones propose at once (honest,
// no-op and slow patches) and push after each proposal, while 3 runners
// with keys of their own race for the work; one runner is killed with
// SIGKILL mid-verdict and its claim is taken over once its lease ran out.
// Every proposal ends with exactly one trusted verdict, no claim is left,
// and a fresh clone verifies the ledger with every verdict signed.
func TestFleetJudgesEveryProposalOnceWithARunnerKilled(t *testing.T) {
	f := newFixture(t, 3)
	runners := make([]string, 3)
	for i := range runners {
		runners[i] = f.clone(fmt.Sprintf("runner%d", i), f.keys[i])
	}

	// The victim claims the first proposal and is killed while judging it.
	first := f.clone("agent-first", "")
	victim := f.propose(first, "first slow", patch(`int main(void) { volatile long n = 0; for (long i = 0; i < 20000000; i++) n += i; puts("1"); return 0; }`))
	f.must(first, "hone", "ledger", "push")
	killed := f.startRunner(runners[2], "--class", "doomed", "--name", "doomed", "--once", "--lease", "20s")
	killed.waitFor(t, "judge "+victim+": build", 60*time.Second)
	if err := syscall.Kill(-killed.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-killed.done
	if claims := f.serverRefs("refs/hone/claims/"); len(claims) != 1 {
		t.Fatalf("after the kill the server's claims are %v, want the victim's", claims)
	}

	// Twelve agents propose at once, pushing after each proposal, while
	// three runners (the dead one restarted) judge.
	var live []*runner
	for i, dir := range runners {
		live = append(live, f.startRunner(dir, "--class", fmt.Sprintf("class%d", i), "--name", fmt.Sprintf("runner%d", i), "--idle", "15s", "--poll", "300ms", "--lease", "20s"))
	}
	bodies := []string{
		`int main(void) { fputs("1\n", stdout); return 0; }`,
		`int main(void) { /* agent %d */ puts("1"); return 0; }`,
		`int main(void) { volatile int n = 0; for (int i = 0; i < 1000000; i++) n += i; puts("1"); return 0; }`,
	}
	var wg sync.WaitGroup
	ids := make([]string, 12)
	for i := range ids {
		dir := f.clone(fmt.Sprintf("agent%d", i), "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.ReplaceAll(bodies[i%3], "%d", fmt.Sprint(i))
			if i%3 != 1 {
				body = strings.Replace(body, "return 0;", fmt.Sprintf("return %d - %d;", i, i), 1)
			}
			ids[i] = f.propose(dir, fmt.Sprintf("agent %d idea", i), patch(body))
			f.must(dir, "hone", "ledger", "push")
		}()
	}
	wg.Wait()
	for _, r := range live {
		r.wait(t, 15*time.Minute)
	}

	all := map[string]bool{victim: true}
	for _, id := range ids {
		all[id] = true
	}
	if len(all) != 13 {
		t.Fatalf("want 13 distinct patches, got %v", all)
	}
	fresh := f.clone("fresh", "")
	verdicts := f.entries(fresh, "verdict")
	per := map[string]int{}
	for _, v := range verdicts {
		per[v.PatchID]++
		if !all[v.PatchID] {
			t.Errorf("verdict %s on unknown patch %s", v.ID, v.PatchID)
		}
		if v.Signer == "untrusted" || (v.Trusted != nil && !*v.Trusted) {
			t.Errorf("verdict %s is not trusted: %+v", v.ID, v)
		}
	}
	for id := range all {
		if per[id] != 1 {
			t.Errorf("patch %s has %d verdicts, want exactly 1", id, per[id])
		}
	}
	if claims := f.serverRefs("refs/hone/claims/"); len(claims) != 0 {
		t.Errorf("claims left behind: %v", claims)
	}
	took := false
	for _, r := range live {
		took = took || strings.Contains(r.stderr.String(), "took over "+victim+" from doomed")
	}
	if !took {
		for _, r := range live {
			t.Log(r.stderr.String())
		}
		t.Errorf("no runner took the killed runner's claim over")
	}
	if out, errOut, code := f.run(fresh, "hone", "ledger", "verify", "--require-signed"); code != 0 {
		t.Errorf("ledger verify --require-signed on a fresh clone: exit %d\n%s%s", code, out, errOut)
	}
	// The branch plain git reads holds every verdict once a writer folded.
	f.must(fresh, "hone", "ledger", "push")
	tree := f.must(f.server, "git", "ls-tree", "-r", "--name-only", "hone/ledger")
	n := 0
	for _, p := range strings.Fields(tree) {
		if strings.Contains(p, "/verdict/") && strings.HasSuffix(p, ".toml") {
			n++
		}
	}
	if n != 13 {
		t.Errorf("the server's hone/ledger branch holds %d verdicts, want 13", n)
	}
}
