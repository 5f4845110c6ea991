package attack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testproc"
)

// A hone killed with SIGKILL in the middle of a verdict leaves its run
// folder behind, and nothing running: the jail dies with it. The next hone
// that makes a run folder sweeps it, and so does hone gc; a kept folder
// stays.
func TestVerdictKilledMidwayIsSweptLater(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the arena runs hone as root")
	}
	t.Parallel()
	a := newArena(t, 0)
	runs := filepath.Join(a.Repo, ".git", "hone", "runs")
	kill := func(hypothesis, reps string) string {
		t.Helper()
		// Held in its unit gate, past the build, until it is killed.
		files := a.Prog("#define REPS 4", "#define REPS "+reps)
		defer a.Hold(files)()
		id := a.Propose(hypothesis, files)
		cmd := a.Command(a.Hone, "verdict", id)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			if built, _ := filepath.Glob(filepath.Join(runs, "verdict-*", "candidate", "out", "prog")); len(built) == 1 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("the verdict never built its candidate")
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		left, _ := filepath.Glob(filepath.Join(runs, "verdict-*"))
		if len(left) != 1 {
			t.Fatalf("run folders after the kill: %v", left)
		}
		// The jail dies with hone (bwrap --die-with-parent): nothing of
		// the run's is left, whatever it was doing.
		for i := 0; testproc.Count(t, left[0]) > 0 && i < 100; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if n := testproc.Count(t, left[0]); n != 0 {
			t.Errorf("%d processes of the killed verdict are still running", n)
		}
		return left[0]
	}

	dead := kill("killed once", "2")
	kept := filepath.Join(runs, "kept-by-hand")
	a.MustHone("verdict", "--keep", a.Propose("kept", a.Prog("#define REPS 4", "#define REPS 5")))
	if k, _ := filepath.Glob(filepath.Join(runs, "verdict-*")); len(k) != 1 {
		t.Fatalf("after the next verdict: %v (the dead one should be swept, the kept one stay)", k)
	} else if k[0] == dead {
		t.Fatalf("the next verdict did not sweep %s", dead)
	} else {
		os.Rename(k[0], kept)
	}

	dead = kill("killed twice", "3")
	var gc struct {
		Leftovers struct{ Items int } `json:"leftovers"`
		Kept      []string            `json:"kept"`
	}
	if err := json.Unmarshal([]byte(a.MustHone("gc", "--json")), &gc); err != nil {
		t.Fatal(err)
	}
	if gc.Leftovers.Items != 1 || len(gc.Kept) != 1 || gc.Kept[0] != kept {
		t.Errorf("hone gc: %+v", gc)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("hone gc left %s: %v", dead, err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("hone gc removed the kept folder: %v", err)
	}
}
