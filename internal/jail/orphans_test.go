package jail

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A jail process whose hone died (bwrap's child, left by the race
// killOrphans describes, here a sleep of the jail user whose parent exited)
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

	killed, err := killOrphans()
	if err != nil || killed < 1 {
		t.Fatalf("killOrphans = %d, %v; want the orphan killed", killed, err)
	}
	for end := time.Now().Add(10 * time.Second); running(orphan); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the orphan %d still runs", orphan)
		}
	}
	if !running(live.Process.Pid) {
		t.Errorf("killOrphans killed a jail process whose parent lives")
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

// What a dead hone's jail left running (bubblewrap#633's sleeping child,
// here a sleep started in a run cgroup named for a hone that has exited)
// is killed with its cgroup; a live hone's run cgroup is left alone.
func TestKillLeftoversKillsWhatADeadHonesRunCgroupsHold(t *testing.T) {
	base := runCgroupBase()
	if base == "" {
		t.Skip("no cgroup v2 this user may create: leftovers are found by killOrphans instead")
	}
	gone := exec.Command("/bin/true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if alive(gone.Process.Pid) {
		t.Skip("the exited process's pid was reused already")
	}
	sleepIn := func(name string) (*exec.Cmd, string) {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeCgroup(dir) })
		fd, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		cmd := exec.Command("sleep", "600")
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(fd.Fd())}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, dir
	}
	leftover, deadDir := sleepIn(fmt.Sprintf("hone-jail-%d-1", gone.Process.Pid))
	live, liveDir := sleepIn(fmt.Sprintf("hone-jail-%d-%d", os.Getpid(), cgroupSeq.Add(1)))

	killed, err := KillLeftovers()
	if err != nil || killed < 1 {
		t.Fatalf("KillLeftovers = %d, %v; want the dead hone's sleep killed", killed, err)
	}
	for end := time.Now().Add(10 * time.Second); running(leftover.Process.Pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the dead hone's leftover %d still runs", leftover.Process.Pid)
		}
	}
	if _, err := os.Stat(deadDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead hone's cgroup %s is still there (%v)", deadDir, err)
	}
	if !running(live.Process.Pid) {
		t.Errorf("KillLeftovers killed a process of a live hone's run")
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("the live hone's cgroup: %v", err)
	}
}
