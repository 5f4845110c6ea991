package demo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// scriptedHone stands in for the hone binary so the session's own checks can
// be tested without a minute of real builds and benchmarks (the testscript
// demo_session runs the real thing). It answers each command as a healthy
// hone would, except where override says otherwise.
func scriptedHone(override func(args []string) (Result, bool)) Runner {
	return func(ctx context.Context, dir string, args ...string) (Result, error) {
		if r, ok := override(args); ok {
			return r, nil
		}
		ok := func(out string) (Result, error) { return Result{Stdout: []byte(out)}, nil }
		switch {
		case args[0] == "profile":
			return ok(`{"event": "cpu-clock", "samples": 130, "hotspots": [{"symbol": "find_word", "flat_pct": 90, "cum_pct": 95, "file": "targets/wordfreq/wordfreq.c", "line": 50}]}`)
		case args[0] == "playbook":
			return ok("# 5 Algorithmic\n\nDo less work.\n")
		case args[0] == "patch" && slices.Contains(args, "--json"):
			id := "f1f1f1f1f1f1f1f1"
			if strings.Contains(strings.Join(args, " "), "length-check") {
				id = "5a5a5a5a5a5a5a5a"
			}
			return ok(`{"patch_id": "` + id + `", "commit": "c0ffee"}`)
		case args[0] == "patch":
			return Result{Code: 3, Stderr: []byte("hone: refused \"hone.toml\": outside the target's path\n")}, nil
		case args[0] == "verdict" && args[1] == "f1f1f1f1f1f1f1f1":
			return ok(`{"verdict": "accepted", "reason": "improved", "bench": {"metric": "cpu-time", "confidence": 0.95, "metrics": [{"metric": "cpu-time", "pairs": 5, "speedup": 12, "ci_low": 11, "ci_high": 13}]}}`)
		case args[0] == "verdict":
			return ok(`{"verdict": "rejected-bench", "reason": "regressed"}`)
		case args[0] == "ledger" && len(args) == 1:
			return ok("ID    PATCH\n01a2  f1f1  accepted\n01a3  5a5a  rejected-bench\n")
		case args[0] == "report":
			return Result{}, os.WriteFile(filepath.Join(dir, ReportFile), []byte("<html>"), 0o644)
		}
		return ok("")
	}
}

func TestSessionChecksEveryOutcome(t *testing.T) {
	for _, tc := range []struct {
		name     string
		override func(args []string) (Result, bool)
		failStep string // "" when the session must pass
	}{
		{"as expected", func([]string) (Result, bool) { return Result{}, false }, ""},
		{"fix not accepted", func(args []string) (Result, bool) {
			return Result{Stdout: []byte(`{"verdict": "rejected-bench", "detail": "inconclusive"}`)}, args[0] == "verdict" && args[1] == "f1f1f1f1f1f1f1f1"
		}, "demo step 5 (Ask for the verdict)"},
		{"config edit not refused", func(args []string) (Result, bool) {
			return Result{Stdout: []byte("f00d\n")}, args[0] == "patch" && strings.Contains(strings.Join(args, " "), "and-config")
		}, "demo step 6 (Try to move the goalposts)"},
		{"refusal for another reason", func(args []string) (Result, bool) {
			return Result{Code: 3, Stderr: []byte("hone: refused: class 5 is not allowed\n")}, args[0] == "patch" && strings.Contains(strings.Join(args, " "), "and-config")
		}, "does not name hone.toml"},
		{"hotspot missing from the profile", func(args []string) (Result, bool) {
			return Result{Stdout: []byte(`{"hotspots": [{"symbol": "main", "flat_pct": 90}]}`)}, args[0] == "profile"
		}, "demo step 2 (Profile the target)"},
		{"ledger verify fails", func(args []string) (Result, bool) {
			return Result{Code: 5, Stderr: []byte("hone: entry moved\n")}, args[0] == "ledger" && len(args) == 2
		}, "exit status 5, want 0: hone: entry moved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var done int
			s := &Session{Dir: t.TempDir(), Run: scriptedHone(tc.override), Report: func(e Event) {
				if e.Kind == StepDone {
					done++
				}
			}}
			err := s.Play(context.Background())
			if tc.failStep == "" {
				if err != nil || done != len(script()) {
					t.Fatalf("Play: %v after %d steps, want all %d to pass", err, done, len(script()))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.failStep) {
				t.Fatalf("Play: %v, want an error containing %q", err, tc.failStep)
			}
		})
	}
}
