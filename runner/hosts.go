package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// A runner's host is the one its record names (each claim, heartbeat and
// release records it), else, for a record written before records named
// it, where its last verdict was measured (the verdict entry's
// environment.host): runners on one host take turns to measure, so a
// second one there adds latency, not throughput, and operators should see
// it.

// HostView is one host and the runners whose last verdicts were measured
// there, by name.
type HostView struct {
	Host    string   `json:"host"`
	Runners []string `json:"runners"`
}

// hostOf is the host rec names, else where its last verdict was
// measured: the trusted verdict of its class on its last patch. "" when
// there is none in l, or it cannot be read (a status view does not fail
// for it).
func hostOf(ctx context.Context, l *ledger.Ledger, rec *ledger.RunnerRecord) string {
	if rec.Host != "" {
		return rec.Host
	}
	if rec.LastPatch == "" {
		return ""
	}
	attempts, err := l.Attempts(ctx, ledger.Filter{PatchID: rec.LastPatch})
	if err != nil {
		return ""
	}
	for _, a := range attempts {
		for i := len(a.Verdicts) - 1; i >= 0; i-- {
			v := a.Verdicts[i]
			if !v.Trusted || v.RunnerClass != rec.Class || v.Verdict == ledger.VerdictInProgress {
				continue
			}
			s, err := l.Get(ctx, v.ID)
			if err != nil {
				return ""
			}
			var e verdict.Entry
			if s.Kind != ledger.KindVerdict || s.Decode(&e) != nil {
				return ""
			}
			return e.Environment.Host
		}
	}
	return ""
}

// byHost groups runners by host, hosts sorted, and warns of each host with
// more than one runner.
func byHost(runners []RunnerView) ([]HostView, []errs.Warning) {
	m := map[string][]string{}
	for _, r := range runners {
		if r.Host != "" {
			m[r.Host] = append(m[r.Host], r.Runner)
		}
	}
	hosts := []HostView{}
	var warns []errs.Warning
	for h, names := range m {
		sort.Strings(names)
		hosts = append(hosts, HostView{Host: h, Runners: names})
		if len(names) > 1 {
			warns = append(warns, sharedHost(h, names))
		}
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].Host < hosts[j].Host })
	sort.Slice(warns, func(i, j int) bool { return warns[i].Message < warns[j].Message })
	return hosts, warns
}

func sharedHost(host string, names []string) errs.Warning {
	return errs.Warning{Code: "runners_share_host", Message: fmt.Sprintf(
		"runners %s share host %s: runners on one machine take turns to measure, so a second one adds latency, not throughput; run one runner per machine",
		strings.Join(names, ", "), host)}
}

// warnSharedHost tells, at a runner's first round, which other runners'
// last verdicts were measured on this machine.
func (r *runner) warnSharedHost(ctx context.Context, fleet *ledger.Fleet) {
	here, err := os.Hostname()
	if err != nil || here == "" {
		return
	}
	var others []string
	for name, rec := range fleet.Runners {
		if name != r.opts.Name && hostOf(ctx, r.l, rec.RunnerRecord) == here {
			others = append(others, name)
		}
	}
	if len(others) == 0 {
		return
	}
	slices.Sort(others)
	r.progress("warning: %s", sharedHost(here, append([]string{r.opts.Name}, others...)).Message)
}
