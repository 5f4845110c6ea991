package fleet

import (
	"strings"
	"testing"
	"time"
)

// `hone runner --once --idle D` (a CI job started by an agent's dispatch,
// which may arrive before the proposal does) waits up to D for one
// proposal, judges it and exits, rather than leaving at once on an empty
// queue.
func TestARunnerOnceWaitsUpToItsIdleTimeForWork(t *testing.T) {
	f := newFixture(t, 1)
	r := f.startRunner(f.clone("runner0", f.keys[0]), "--name", "runner0", "--once", "--idle", "2m", "--poll", "200ms")
	r.waitFor(t, "queue empty", time.Minute)
	select {
	case <-r.done:
		t.Fatalf("hone runner --once --idle 2m left on an empty queue:\n%s", r.stderr.String())
	default:
	}
	id := f.publish(f.clone("agent", ""), "late", honestPatch)
	r.wait(t, 3*time.Minute)
	if !strings.Contains(r.stderr.String(), "verdict "+id+": ") {
		t.Fatalf("the runner did not judge the proposal that arrived while it waited:\n%s", r.stderr.String())
	}
	f.judgedOnce(t, "fresh", id)
}
