package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
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
	victim := f.publish(first, "first slow", patch(`int main(void) { volatile long n = 0; for (long i = 0; i < 20000000; i++) n += i; puts("1"); return 0; }`))
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
		live = append(live, f.startRunner(dir, "--class", fmt.Sprintf("class%d", i), "--name", fmt.Sprintf("runner%d", i), "--poll", "300ms", "--lease", "20s"))
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
			ids[i] = f.publish(dir, fmt.Sprintf("agent %d idea", i), patch(body))
		}()
	}
	wg.Wait()
	// The runners are stopped once every proposal has its verdict, not by
	// an idle spell of their own: a spell shorter than what was left of
	// the victim's lease let them all stop before it ended whenever they
	// judged the twelve within seconds of the kill.
	want := append([]string{victim}, ids...)
	for end := time.Now().Add(15 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		left := []string{}
		for _, id := range want {
			judged := false
			for _, r := range live {
				judged = judged || strings.Contains(r.stderr.String(), "verdict "+id+": ")
			}
			if !judged {
				left = append(left, id)
			}
		}
		if len(left) == 0 {
			break
		}
		for _, r := range live {
			select {
			case <-r.done:
				t.Fatalf("a runner exited with %v still to judge: %v\n%s", left, r.err, r.stderr.String())
			default:
			}
		}
		if time.Now().After(end) {
			for _, r := range live {
				t.Log(r.stderr.String())
			}
			t.Fatalf("no verdict on %v within the test's time", left)
		}
	}
	for _, r := range live {
		if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range live {
		r.wait(t, time.Minute)
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

// A runner that cannot judge a proposal (its bench lock is a link, which
// hone refuses to measure through) gives the patch up: it ends its own
// lease at once, a claim the hook takes from the claim's holder though it
// has ended before it arrives, and another runner takes the patch over
// without waiting out the lease, and judges it.
func TestARunnerThatCannotJudgeGivesThePatchUp(t *testing.T) {
	f := newFixture(t, 2)
	agent := f.clone("agent", "")
	id := f.publish(agent, "given up", honestPatch)

	broken := f.clone("runner0", f.keys[0])
	link := filepath.Join(f.dir, "bench.link")
	if err := os.Symlink(filepath.Join(f.dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	// The measurement tier's meter: the test builds' work meter takes no
	// bench turn, and the turn's lock is what this runner cannot take.
	f.ident = map[string][]string{broken: {verdict.BenchLockEnv + "=" + link, "HONE_TIER=measure"}}
	r := f.startRunner(broken, "--name", "runner0", "--once", "--lease", "10m")
	r.wait(t, 3*time.Minute)
	if !strings.Contains(r.stderr.String(), "judge "+id+": not judged") {
		t.Fatalf("the runner with a linked bench lock judged %s:\n%s", id, r.stderr.String())
	}
	msg := f.must(f.server, "git", "show", "-s", "--format=%B", claimCommit(t, f, id))
	c, err := ledger.ParseClaim(id, msg)
	if err != nil || c.Runner != "runner0" || !c.Expires.Equal(c.Renewed) {
		t.Fatalf("the claim runner0 gave up is %+v (%v), want runner0's, its lease ended when renewed:\n%s", c, err, msg)
	}

	other := f.startRunner(f.clone("runner1", f.keys[1]), "--name", "runner1", "--once", "--lease", "10m")
	other.wait(t, 3*time.Minute)
	if !strings.Contains(other.stderr.String(), "took over "+id+" from runner0") {
		t.Errorf("runner1 did not take the given-up claim over:\n%s", other.stderr.String())
	}
	vs := f.entries(f.clone("fresh", ""), "verdict")
	if len(vs) != 1 || vs[0].PatchID != id || vs[0].Trusted == nil || !*vs[0].Trusted {
		t.Errorf("the server's verdicts are %+v, want runner1's trusted verdict on %s", vs, id)
	}
	if claims := f.serverRefs("refs/hone/claims/"); len(claims) != 0 {
		t.Errorf("claims left behind: %v", claims)
	}
}
