package jail

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hone-perf/hone/internal/errs"
)

var (
	checkMu sync.Mutex
	checked = map[string]error{}
)

// Check reports whether the full jail works here for a network policy
// ("deny" or "allow"), by running a real command in it once per process.
// When it does not, the error is one line saying what is missing and how to
// install or enable it.
func Check(network string) error {
	if network == "" {
		network = "deny"
	}
	checkMu.Lock()
	defer checkMu.Unlock()
	if err, ok := checked[network]; ok {
		return err
	}
	err := probe(network)
	checked[network] = err
	return err
}

const weakHint = `, or set [sandbox] isolation = "weak" in hone.toml to run without it`

func probe(network string) error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return errs.Failuref("jail: bubblewrap (bwrap) is not installed; install it (apt-get install bubblewrap)" + weakHint)
	}
	s, err := Spec{Command: "/bin/true", Network: network}.normalize()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runFull(ctx, s)
	if err != nil {
		return err
	}
	if res.Success() {
		return nil
	}
	if fix := usernsFix(); fix != "" {
		return errs.Failuref("jail: unprivileged user namespaces are disabled; enable them with `%s`%s", fix, weakHint)
	}
	return errs.Failuref("jail: bwrap cannot build the jail here (%s)%s", res.Describe(), weakHint)
}

// usernsFix names the sysctl that keeps bwrap from creating a user
// namespace, if one does.
func usernsFix() string {
	for _, c := range []struct{ file, bad, fix string }{
		{"/proc/sys/kernel/unprivileged_userns_clone", "0", "sysctl -w kernel.unprivileged_userns_clone=1"},
		{"/proc/sys/user/max_user_namespaces", "0", "sysctl -w user.max_user_namespaces=15000"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"},
	} {
		if b, err := os.ReadFile(c.file); err == nil && strings.TrimSpace(string(b)) == c.bad {
			return c.fix
		}
	}
	return ""
}
