package jail

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// A process a run leaves behind is named, with how long it ran, before it
// is killed: a verdict can then say whose it was.
func TestLeftoverProcessesAreNamed(t *testing.T) {
	tier.Jail(t)
	for _, iso := range []string{"full", "weak"} {
		t.Run(iso, func(t *testing.T) {
			res := run(t, Spec{Command: "/bin/sh -c 'sleep 100 & sleep 100 & exit 0'", Isolation: iso})
			if res.Leftover != 2 || len(res.Lingering) != 2 {
				t.Fatalf("leftover %d, lingering %+v; want two, both named", res.Leftover, res.Lingering)
			}
			// A child caught between the shell's fork and its exec still
			// shows the shell's command line, which names it too.
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
