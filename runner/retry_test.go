package runner

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
)

func TestOnlyPolicyAndUsageEndTheLoop(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"a hook's refusal", errs.Policyf("remote refused"), true},
		{"a bad flag", errs.Usagef("--lease"), true},
		{"a remote away", errs.Wrap(errs.Failure, errors.New("does not appear to be a git repository"), "cannot fetch"), false},
		{"a lost race", errs.Wrap(errs.Busy, ledger.ErrLostRace, "moved"), false},
		{"a release that broke off, wrapped", fmt.Errorf("cannot push the verdict: %w", errs.Wrap(errs.Failure, errors.New("EOF"), "push")), false},
		{"a refusal of the release, wrapped", fmt.Errorf("cannot push the verdict: %w", errs.Policyf("refused")), true},
		{"an untyped error", errors.New("boom"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := final(c.err); got != c.want {
				t.Errorf("final(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

func TestRetryWaitsGrowAndStayWithinATenthOfTheLease(t *testing.T) {
	for _, c := range []struct {
		lease, ceil time.Duration
	}{
		{15 * time.Minute, 10 * time.Second},
		{90 * time.Second, 9 * time.Second},
		{5 * time.Second, time.Second},
	} {
		r := &runner{opts: Options{Lease: c.lease}}
		for n := 1; n <= 40; n++ {
			d := min(500*time.Millisecond<<min(n-1, 10), c.ceil)
			if w := r.retryWait(n); w < d/2 || w > d {
				t.Errorf("lease %s, try %d: wait %s, want within [%s, %s]", c.lease, n, w, d/2, d)
			}
		}
	}
}

func TestRunnersAreGroupedByHost(t *testing.T) {
	view := func(name, host string) RunnerView {
		return RunnerView{RunnerRecord: ledger.RunnerRecord{Runner: name}, Host: host}
	}
	hosts, warns := byHost([]RunnerView{view("b", "h1"), view("a", "h1"), view("c", "h2"), view("d", "")})
	if len(hosts) != 2 || hosts[0].Host != "h1" || fmt.Sprint(hosts[0].Runners) != "[a b]" || hosts[1].Host != "h2" {
		t.Errorf("hosts %+v", hosts)
	}
	if len(warns) != 1 || warns[0].Code != "runners_share_host" {
		t.Errorf("warnings %+v, want one for h1", warns)
	}
}
