package jail

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A jail process whose hone died (bwrap's child, left by the race
// KillOrphans describes, here a sleep of the jail user whose parent exited)
// is killed; one a live parent still waits for is left alone.
func TestKillOrphansKillsTheJailUsersProcessesThatLostTheirHone(t *testing.T) {
	root(t)
	acct, err := jailAccount("")
	if err != nil {
		t.Fatal(err)
	}
	asJail := []string{"--reuid=" + strconv.Itoa(acct.uid), "--regid=" + strconv.Itoa(acct.gid), "--clear-groups", "--"}
	out, err := exec.Command("setpriv", append(asJail, "sh", "-c", "sleep 600 >/dev/null 2>&1 & echo $!")...).Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Command("kill", "-9", strconv.Itoa(orphan)).Run() })
	if !orphanOf(orphan, acct.uid) {
		t.Skip("a subreaper, not the host's init, adopted the orphan here")
	}
	live := exec.Command("setpriv", append(asJail, "sleep", "600")...)
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })

	killed, err := KillOrphans()
	if err != nil || killed < 1 {
		t.Fatalf("KillOrphans = %d, %v; want the orphan killed", killed, err)
	}
	for end := time.Now().Add(10 * time.Second); running(orphan); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the orphan %d still runs", orphan)
		}
	}
	if !running(live.Process.Pid) {
		t.Errorf("KillOrphans killed a jail process whose parent lives")
	}
}

// running says whether pid runs: a zombie has stopped.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
