package risk

import (
	"strings"
	"testing"
	"time"
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

func TestBuildWork(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand time.Duration
		speedup    float64
		flagged    bool
	}{
		{"the same build", time.Second, 1100 * time.Millisecond, 3, false},
		{"a table computed by the build", time.Second, 9 * time.Second, 3, true},
		{"a slower build of a slower program", time.Second, 9 * time.Second, 0.9, false},
		{"twice a tiny build", 100 * time.Millisecond, 300 * time.Millisecond, 3, false},
		{"an unknown baseline", 0, 9 * time.Second, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BuildWork(tc.base, tc.cand, tc.speedup); (len(got) > 0) != tc.flagged {
				t.Errorf("BuildWork = %q, flagged %v", got, tc.flagged)
			}
		})
	}
}
