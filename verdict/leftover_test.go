package verdict

import (
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace"
)

// A candidate's gate that leaves a process behind is rejected only for a
// process of its own doing, named in the message; one that leaves only
// helpers of hone's or the toolchain's (Go's build cache program, a
// compiler pass) is hone's or the toolchain's flake: an error, run again.
func TestGateLeftoversBlameOnlyTheCandidatesOwnProcesses(t *testing.T) {
	unit := workspace.Gate{Name: "unit", Run: "unit"}
	golden := workspace.Gate{Name: "golden", Run: "golden", Equivalence: true}
	for _, tc := range []struct {
		name    string
		gate    workspace.Gate
		left    []jail.Lingering
		outcome gateOutcome
		message string
	}{
		{"its own helper, in a plain gate", unit, []jail.Lingering{{PID: 7, Command: "sleep 100", Seconds: 0.25}}, gateFailed, "left 1 processes running after it exited (killed, and their CPU time charged): pid 7 `sleep 100` (running 0.2 s)"},
		{"its own helper, in an equivalence gate", golden, []jail.Lingering{{PID: 9, Command: "/tmp/x/prog --serve"}}, gateFailed, "pid 9 `/tmp/x/prog --serve`"},
		{"Go's build cache program", unit, []jail.Lingering{{PID: 12, Command: "/hone/tool/hone-gocacheprog"}}, helpersLeft, "hone-gocacheprog"},
		{"a compiler pass and a test binary", golden, []jail.Lingering{{PID: 3, Command: "/usr/libexec/gcc/x86_64-linux-gnu/12/cc1 -quiet"}, {PID: 4, Command: "/tmp/go-build1/b001/xxhash.test -test.v"}}, helpersLeft, "cc1"},
		{"a process that was exiting when it was named", unit, []jail.Lingering{{PID: 13, Seconds: 17.4}}, helpersLeft, "pid 13 (exiting: no command line left to read) (running 17.4 s)"},
		{"a helper beside a process of its own", unit, []jail.Lingering{{PID: 12, Command: "hone-gocacheprog"}, {PID: 13, Command: "sleep 100"}}, gateFailed, "sleep 100"},
		{"more processes than it names", unit, []jail.Lingering{{PID: 12, Command: "go"}}, gateFailed, "left 2 processes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leftover := len(tc.left)
			if strings.HasPrefix(tc.name, "more") {
				leftover = 2
			}
			m := &lingeringMeter{fakeMeter: fakeMeter{gate: func(s jail.Spec) run {
				if strings.HasSuffix(s.Command, "candidate") {
					return run{out: "ok", leftover: leftover}
				}
				return run{out: "ok"}
			}}, left: tc.left}
			r := &gateRunner{t: &workspace.Target{Gates: []workspace.Gate{tc.gate}}, m: m, env: &Environment{}, logs: newGateLogs(1 << 20),
				base: &build.Side{Role: build.Baseline}, cand: &build.Side{Role: build.Candidate},
				spec: func(s *build.Side, g workspace.Gate, _ PairSetup) jail.Spec {
					return jail.Spec{Command: g.Run + " " + string(s.Role)}
				}}
			out, outcome, err := r.runGates(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if last := out[len(out)-1]; outcome != tc.outcome || !strings.Contains(last.Message, tc.message) {
				t.Errorf("outcome %v, message %q; want %v with %q", outcome, last.Message, tc.outcome, tc.message)
			}
		})
	}
}

// lingeringMeter names, as the jail's meter does, the processes a run left.
type lingeringMeter struct {
	fakeMeter
	left []jail.Lingering
}

func (m *lingeringMeter) exec(ctx context.Context, spec jail.Spec) (*jail.Result, error) {
	res, err := m.fakeMeter.exec(ctx, spec)
	if res != nil && res.Leftover > 0 {
		res.Lingering = m.left
	}
	return res, err
}
