package jail

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// killOrphans is KillLeftovers where there are no run cgroups. Every
// process of a live jail has a parent in that jail or hone itself, so a
// process of the jail user whose parent is the host's init belongs to no
// live hone. Only root's hones have a jail user of their own; an ordinary
// user's jails run as that user, beside processes of the user's that hone
// must never touch, so nothing is killed then.
func killOrphans() (int, error) {
	if os.Geteuid() != 0 {
		return 0, nil
	}
	acct, err := lookupAccount(DefaultUser)
	if err != nil {
		// No jail user: no jail ever ran here as root.
		return 0, nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	killed := 0
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || !orphanOf(pid, acct.uid) {
			continue
		}
		// Through a pidfd, checked again once open: the pid cannot be
		// another process by the time the signal is sent.
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if orphanOf(pid, acct.uid) && unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
			killed++
		}
		unix.Close(fd)
	}
	return killed, nil
}

// orphanOf says whether process pid runs as uid and has the host's init
// as its parent.
func orphanOf(pid, uid int) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	defer f.Close()
	var ppid, realUID = -1, -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		switch key {
		case "PPid":
			ppid, _ = strconv.Atoi(fields[0])
		case "Uid":
			realUID, _ = strconv.Atoi(fields[0])
		}
	}
	return ppid == 1 && realUID == uid
}
