package jail

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/tier"
)

// A process a run leaves behind is named, with how long it ran, before it
// is killed: a verdict can then say whose it was.
func TestLeftoverProcessesAreNamed(t *testing.T) {
	tier.Jail(t)
	for _, iso := range []string{"full", "weak"} {
		t.Run(iso, func(t *testing.T) {
			// The shell exits only once both children have exec'd sleep:
			// one caught inside its exec has no command line yet, and a
			// busy machine once left one there when the shell exited. The
			// shell counts the command lines that are exactly the sleep's
			// among all /proc shows (the host's, with weak isolation: the
			// pid in the sleep's argument keeps other runs' out of it).
			arg := fmt.Sprintf("100.%d", os.Getpid())
			pattern := strings.Replace(arg, ".", "[.]", 1) // never its own argument
			res := run(t, Spec{Command: "sleep " + arg + " & sleep " + arg + " & " +
				`until [ "$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' | grep -cx '` + pattern + `')" = 2 ]; do :; done`,
				Isolation: iso, Timeout: time.Minute}) // a guard against a hang, not a timing assertion
			if res.Leftover != 2 || len(res.Lingering) != 2 {
				t.Fatalf("leftover %d, lingering %+v; want two, both named", res.Leftover, res.Lingering)
			}
			for _, l := range res.Lingering {
				if l.PID <= 0 || !strings.Contains(l.Command, "sleep 100") || l.Seconds < 0 || l.Seconds > 60 {
					t.Errorf("lingering %+v; want a pid, a command naming `sleep 100` and a few seconds at most", l)
				}
			}
		})
	}
}

func TestLingeringIsBounded(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "/bin/sh -c '" + strings.Repeat("sleep 100 & ", MaxLingering+2) + "exit 0'"})
	if res.Leftover != MaxLingering+2 || len(res.Lingering) != MaxLingering {
		t.Errorf("leftover %d, lingering %d; want %d, %d", res.Leftover, len(res.Lingering), MaxLingering+2, MaxLingering)
	}
}
