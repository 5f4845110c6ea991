package risk

import (
	"strings"
	"testing"
)

func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		baseMax, candMin, candMax int
		flagged                   bool
	}{
		{"the same tasks", 1, 1, 1, false},
		{"a thread in every candidate run", 1, 2, 2, true},
		{"a Go runtime's threads, overlapping", 7, 5, 9, false},
		{"unknown counts", 0, 3, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Runs(tc.baseMax, tc.candMin, tc.candMax)
			if (len(got) > 0) != tc.flagged {
				t.Errorf("Runs(%d, %d, %d) = %q, flagged %v", tc.baseMax, tc.candMin, tc.candMax, got, tc.flagged)
			}
			if tc.flagged && !strings.HasPrefix(got[0], "processes or threads in bench runs") {
				t.Errorf("signal %q", got[0])
			}
		})
	}
}

func TestLibcEntryPointsThatStartThreadsOrProcesses(t *testing.T) {
	for sym, want := range map[string]string{
		"timer_create": "threads", "mq_notify": "threads", "aio_read": "threads", "aio_suspend64": "threads",
		"lio_listio": "threads", "getaddrinfo_a": "threads", "wordexp": "processes", "posix_spawnp": "processes",
		"system": "processes", "popen": "processes", "timer_settime": "", "wordfree": "",
	} {
		if got := symbolSignal(sym); got != want {
			t.Errorf("symbolSignal(%s) = %q, want %q", sym, got, want)
		}
	}
}
