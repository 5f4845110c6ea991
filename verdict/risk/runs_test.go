package risk

import (
	"strings"
	"testing"
	"time"
)

func TestRuns(t *testing.T) {
	sp := func(lo, hi int) *Span { return &Span{Min: lo, Max: hi} }
	split := func(procs, threads *Span) RunTasks {
		return RunTasks{Tasks: sp(procs.Min+threads.Min, procs.Max+threads.Max), Processes: procs, Threads: threads}
	}
	for _, tc := range []struct {
		name       string
		base, cand RunTasks
		want       string // the signal's start, "" for none
	}{
		{"the same tasks", split(sp(1, 1), sp(0, 0)), split(sp(1, 1), sp(0, 0)), ""},
		{"a timer's thread", split(sp(1, 1), sp(0, 0)), split(sp(1, 1), sp(1, 1)), "threads in bench runs (each candidate run started 1, each baseline run at most 0)"},
		{"a shell and its child", split(sp(1, 1), sp(0, 0)), split(sp(3, 3), sp(0, 0)), "processes in bench runs (each candidate run started 3, each baseline run at most 1)"},
		{"a Go runtime's threads, overlapping", split(sp(1, 1), sp(4, 7)), split(sp(1, 1), sp(5, 9)), ""},
		{"threads hidden behind forks that fail", split(sp(2, 2), sp(0, 0)), RunTasks{Tasks: sp(3, 3), Processes: sp(2, 2), Threads: sp(0, 0)}, "processes or threads in bench runs"},
		{"an entry from before the split", RunTasks{Tasks: sp(1, 1)}, RunTasks{Tasks: sp(2, 2)}, "processes or threads in bench runs (each candidate run started 2, each baseline run at most 1)"},
		{"unknown counts", RunTasks{}, RunTasks{Tasks: sp(3, 3)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Runs(tc.base, tc.cand)
			if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)) {
				t.Errorf("Runs = %q, want one signal starting %q", got, tc.want)
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
