package soundness

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Verdicts that wait for the machine's turn to measure say, off a
// terminal, who holds it, their place in line and when their turn is
// expected (from the machine's recent turns), as soon as they wait:
// minutes of "wait for the machine" with no holder told a user nothing.
// The verdicts measure on the clock (HONE_TIER=measure: the work meter
// takes no turn), and are stopped once they have said it.
func TestWaitingVerdictSaysWhoHoldsTheMachineAndItsPlace(t *testing.T) {
	w := newWorld(t)
	turn := filepath.Join(t.TempDir(), "bench.lock")
	f, err := os.OpenFile(turn, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	record, _ := json.Marshal(map[string]any{"pid": 4242, "command": "hone verdict 3f2a", "purpose": "measure on this machine", "since": time.Now()})
	if _, err := f.Write(record); err != nil {
		t.Fatal(err)
	}
	// Two earlier turns of ten minutes each, as holders record them.
	if err := os.WriteFile(turn+".turns", []byte("10m0s\n10m0s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := w.propose("one walk", w.diff("#define REPS 4", "#define REPS 1"))
	second := w.propose("two walks", w.diff("#define REPS 4", "#define REPS 2"))
	lines := make(chan string, 100)
	wait := func(id string) *exec.Cmd {
		cmd := w.command(w.dir, w.hone, "verdict", id)
		cmd.Env = append(cmd.Env, "HONE_TIER=measure", "HONE_BENCH_LOCK="+turn)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		go func() {
			for sc := bufio.NewScanner(stderr); sc.Scan(); {
				lines <- id + ": " + sc.Text()
			}
		}()
		return cmd
	}
	await := func(want *regexp.Regexp) {
		t.Helper()
		// A guard against a hang, not a timing assertion.
		deadline := time.After(5 * time.Minute)
		var seen []string
		for {
			select {
			case l := <-lines:
				if want.MatchString(l) {
					return
				}
				seen = append(seen, l)
			case <-deadline:
				t.Fatalf("no line matching %s; saw:\n%s", want, strings.Join(seen, "\n"))
			}
		}
	}
	held := regexp.QuoteMeta(": wait for the machine: held by hone pid 4242 (`hone verdict 3f2a`) since ") + `\d\d:\d\d:\d\d; `
	expected := regexp.QuoteMeta("; expected at about ") + `\d\d:\d\d:\d\d` + regexp.QuoteMeta(" (a turn here takes 10m0s, the median of recent ones)")
	wait(first)
	await(regexp.MustCompile("^" + first + ": hone: verdict " + first + held + "next in line" + expected + "$"))
	wait(second)
	await(regexp.MustCompile("^" + second + ": hone: verdict " + second + held + "1 ahead in line" + expected + "$"))
}
