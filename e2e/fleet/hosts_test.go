package fleet

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// Runners on one machine take turns to measure, so a second one there adds
// latency, not throughput: a runner says so when it starts beside another
// runner whose last verdict was measured on its host, and `hone runner
// status` shows the runners by host and warns of the shared one.
func TestRunnersSharingAHostAreWarnedOf(t *testing.T) {
	f := newFixture(t, 2)
	agent := f.clone("agent", "")
	f.publish(agent, "first", honestPatch)
	f.publish(agent, "second", patch(`int main(void) { /* second */ puts("1"); return 0; }`))
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}

	first := f.startRunner(f.clone("runner0", f.keys[0]), "--name", "runner0", "--once")
	first.wait(t, 3*time.Minute)
	// The record names the host, so a runner is placed from its first
	// claim, before any verdict says where it measured.
	if rec := f.must(f.server, "git", "log", "--format=%B", "refs/hone/runners/runner0"); strings.Count(rec, "host = \""+host+"\"") < 2 {
		t.Errorf("runner0's claim and release records do not name its host %s:\n%s", host, rec)
	}
	if strings.Contains(first.stderr.String(), "share host") {
		t.Errorf("the first runner warned of a shared host:\n%s", first.stderr.String())
	}
	second := f.startRunner(f.clone("runner1", f.keys[1]), "--name", "runner1", "--once")
	second.wait(t, 3*time.Minute)
	if !strings.Contains(second.stderr.String(), "runners runner1, runner0 share host "+host) {
		t.Errorf("the second runner on this host did not say so at start:\n%s", second.stderr.String())
	}

	var st struct {
		Runners []struct {
			Runner string `json:"runner"`
			Host   string `json:"host"`
		} `json:"runners"`
		Hosts []struct {
			Host    string   `json:"host"`
			Runners []string `json:"runners"`
		} `json:"hosts"`
		Warnings []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"warnings"`
	}
	out := f.must(f.clone("operator", ""), "hone", "runner", "status", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(st.Hosts) != 1 || st.Hosts[0].Host != host || !slices.Equal(st.Hosts[0].Runners, []string{"runner0", "runner1"}) {
		t.Errorf("hosts %+v, want both runners on %s", st.Hosts, host)
	}
	for _, r := range st.Runners {
		if r.Host != host {
			t.Errorf("runner %s's host is %q, want %s", r.Runner, r.Host, host)
		}
	}
	if len(st.Warnings) != 1 || st.Warnings[0].Code != "runners_share_host" {
		t.Errorf("warnings %+v, want one runners_share_host", st.Warnings)
	}
	_, errOut, code := f.run(f.clone("operator2", ""), "hone", "runner", "status")
	if code != 0 || !strings.Contains(errOut, "hone: warning: runners runner0, runner1 share host "+host) {
		t.Errorf("hone runner status: exit %d, stderr:\n%s", code, errOut)
	}
}
