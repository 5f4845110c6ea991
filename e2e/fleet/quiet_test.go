package fleet

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// An idle runner does not pay the ledger's history every poll: after a
// round that found nothing to claim, it lists the remote's ledger, inbox
// and claim refs and pulls again only when one of them moved. It still
// sees a new proposal at its next poll and judges it, and a lease it saw
// end lets it take a claim over without any ref moving.
func TestAnIdleRunnerPullsOnlyWhenTheRemoteMoved(t *testing.T) {
	f := newFixture(t, 2)
	agent := f.clone("agent", "")
	r := f.startRunner(f.clone("runner0", f.keys[0]), "--name", "runner0", "--poll", "100ms")
	r.waitFor(t, "queue empty", time.Minute)
	// Twenty polls' worth of time on an unchanged remote.
	time.Sleep(2 * time.Second)
	if n := strings.Count(r.stderr.String(), "fetch origin"); n != 1 {
		t.Errorf("the idle runner made %d full rounds on an unchanged remote, want 1:\n%s", n, r.stderr.String())
	}

	id := f.publish(agent, "new", honestPatch)
	r.waitFor(t, "verdict "+id+": ", 2*time.Minute)

	// A claim whose lease ends while nothing moves: another runner claims
	// a new proposal with a short lease and is killed; the idle runner
	// takes it over once the lease has ended.
	// The idle runner is stopped meanwhile, so that the other claims first.
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	second := f.publish(agent, "second", patch(`unsigned sleep(unsigned); int main(void) { sleep(2); puts("1"); return 0; }`))
	other := f.startRunner(f.clone("runner1", f.keys[1]), "--name", "runner1", "--once", "--lease", "10s")
	other.waitFor(t, "judge "+second+": build", 2*time.Minute)
	if err := syscall.Kill(-other.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-other.done
	if err := r.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "took over "+second+" from runner1", 2*time.Minute)
	r.waitFor(t, "verdict "+second+": ", 2*time.Minute)
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r.wait(t, time.Minute)
	f.judgedOnce(t, "fresh", id)
	f.judgedOnce(t, "fresh2", second)
}
