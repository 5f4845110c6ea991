package fleet

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/ledger"
)

// slowPatch keeps the output and sleeps for two seconds a run, so that a
// fault injected when the runner says it builds lands while it still
// judges (its gate and bench runs take seconds whatever the machine's
// speed, and whatever measures the work).
var slowPatch = patch(`unsigned sleep(unsigned); int main(void) { sleep(2); puts("1"); return 0; }`)

// awayRemote moves the fleet's bare remote away, so that every fetch and
// push fails as with a remote that is down, and returns the function that
// brings it back.
func (f *fixture) awayRemote() (back func()) {
	f.t.Helper()
	away := f.server + ".away"
	if err := os.Rename(f.server, away); err != nil {
		f.t.Fatal(err)
	}
	returned := false
	back = func() {
		if returned {
			return
		}
		returned = true
		if err := os.Rename(away, f.server); err != nil {
			f.t.Fatal(err)
		}
	}
	f.t.Cleanup(back)
	return back
}

// waitCount waits until the runner's output has s at least n times.
func (r *runner) waitCount(t *testing.T, s string, n int, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if strings.Count(r.stderr.String(), s) >= n {
			return
		}
	}
	t.Fatalf("runner printed %q fewer than %d times in %s:\n%s", s, n, d, r.stderr.String())
}

// judgedOnce checks, from a fresh clone of the server, that patch id has
// exactly one verdict, trusted and not cancelled, and that no claim is left.
func (f *fixture) judgedOnce(t *testing.T, name, id string) listed {
	t.Helper()
	var on []listed
	for _, v := range f.entries(f.clone(name, ""), "verdict") {
		if v.PatchID == id {
			on = append(on, v)
		}
	}
	if len(on) != 1 {
		t.Fatalf("patch %s has %d verdicts on the server, want exactly 1: %+v", id, len(on), on)
	}
	v := on[0]
	if v.Trusted == nil || !*v.Trusted || v.Verdict == ledger.VerdictCancelled {
		t.Errorf("the verdict on %s is %+v, want a trusted verdict that is not cancelled", id, v)
	}
	if claims := f.serverRefs("refs/hone/claims/"); len(claims) != 0 {
		t.Errorf("claims left behind: %v", claims)
	}
	return v
}

// A remote that is down neither stops a runner nor costs a finished
// verdict: a runner started while the remote is away polls until it
// returns, and a verdict finished while the remote is away again is pushed,
// with its claim's release, once it is back, within the lease, so the
// proposal is judged once and waits for no lease to end.
func TestARunnerOutlastsItsRemoteGoingAway(t *testing.T) {
	f := newFixture(t, 1)
	id := f.publish(f.clone("agent", ""), "slow", slowPatch)
	dir := f.clone("runner0", f.keys[0])

	back := f.awayRemote()
	// Retries that wait at most a second (--retry-max): six failed release
	// pushes take seconds, not the twenty of the default backoff for this
	// lease (up to 9 s a wait), and the lease is left far from its end.
	r := f.startRunner(dir, "--name", "runner0", "--poll", "300ms", "--lease", "90s", "--retry-max", "1s")
	r.waitCount(t, "trying again", 2, time.Minute)
	back()

	r.waitFor(t, "judge "+id+": build", 2*time.Minute)
	back = f.awayRemote()
	r.waitCount(t, "push of the verdict on "+id+" failed, trying again", 6, 2*time.Minute)
	select {
	case <-r.done:
		t.Fatalf("the runner exited while its remote was away:\n%s", r.stderr.String())
	default:
	}
	back()

	r.waitFor(t, "verdict "+id+": ", 2*time.Minute)
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r.wait(t, time.Minute)
	f.judgedOnce(t, "fresh", id)
}

// A runner killed mid-verdict and started again under the same name and
// key resumes its own claim at once, without waiting out its lease (ten
// minutes here, longer than the test waits), and judges the proposal once.
func TestARunnerRestartedUnderItsNameResumesItsClaim(t *testing.T) {
	f := newFixture(t, 1)
	id := f.publish(f.clone("agent", ""), "slow", slowPatch)
	dir := f.clone("runner0", f.keys[0])

	killed := f.startRunner(dir, "--name", "runner0", "--once", "--lease", "10m")
	killed.waitFor(t, "judge "+id+": build", 2*time.Minute)
	if err := syscall.Kill(-killed.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-killed.done
	if claims := f.serverRefs("refs/hone/claims/"); len(claims) != 1 {
		t.Fatalf("after the kill the server's claims are %v, want the killed runner's", claims)
	}

	again := f.startRunner(dir, "--name", "runner0", "--once", "--lease", "10m")
	again.wait(t, 3*time.Minute)
	t.Log(again.stderr.String())
	if !strings.Contains(again.stderr.String(), "resumed "+id) {
		t.Errorf("the restarted runner did not resume its claim on %s:\n%s", id, again.stderr.String())
	}
	f.judgedOnce(t, "fresh", id)
}

// A runner's own stop (SIGINT, as a service manager, a deploy or a
// cancelled CI job sends it) is not the attempt's outcome: the runner
// releases its claim without a verdict, exits 0, and another runner judges
// the proposal at once, once. A `cancelled` verdict is a person's or an
// agent's own cancellation, never a runner's shutdown.
func TestAStoppedRunnerLeavesItsProposalToAnother(t *testing.T) {
	f := newFixture(t, 2)
	id := f.publish(f.clone("agent", ""), "slow", slowPatch)

	stopped := f.startRunner(f.clone("runner0", f.keys[0]), "--name", "runner0", "--lease", "10m")
	stopped.waitFor(t, "judge "+id+": build", 2*time.Minute)
	// The runner's process alone, as systemd's KillMode=mixed signals it:
	// its children are its own to stop.
	if err := stopped.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	stopped.wait(t, time.Minute)
	if !strings.Contains(stopped.stderr.String(), "released "+id+" without a verdict") {
		t.Errorf("the stopped runner did not release its claim on %s:\n%s", id, stopped.stderr.String())
	}
	if vs := f.entries(f.clone("census", ""), "verdict"); len(vs) != 0 {
		t.Fatalf("the stop recorded verdicts %+v; a stop is not an outcome", vs)
	}

	other := f.startRunner(f.clone("runner1", f.keys[1]), "--name", "runner1", "--once", "--lease", "10m")
	other.wait(t, 3*time.Minute)
	t.Log(stopped.stderr.String(), other.stderr.String())
	if !strings.Contains(other.stderr.String(), "took over "+id+" from runner0") {
		t.Errorf("runner1 did not take the released proposal over:\n%s", other.stderr.String())
	}
	f.judgedOnce(t, "fresh", id)
}
