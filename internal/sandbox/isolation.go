package sandbox

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// level is one way of starting a command, from most to least isolated.
type level struct {
	name  string
	flags uintptr // clone flags
	user  bool    // a user namespace mapping our uid/gid to root inside
	pid   bool
	net   bool
}

func (l level) full(denyNet bool) bool { return l.pid && (l.net || !denyNet) }

func (l level) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Cloneflags: l.flags, Pdeathsig: syscall.SIGKILL}
	if l.user {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// candidates lists the levels to try for a network policy. Root needs no user
// namespace for PID and network namespaces; anyone else does.
func candidates(denyNet bool) []level {
	var out []level
	add := func(name string, flags uintptr, user, pid, net bool) {
		out = append(out, level{name: name, flags: flags, user: user, pid: pid, net: net})
	}
	root := os.Geteuid() == 0
	if denyNet {
		if root {
			add("pidns+netns", syscall.CLONE_NEWPID|syscall.CLONE_NEWNET, false, true, true)
		}
		add("userns+pidns+netns", syscall.CLONE_NEWUSER|syscall.CLONE_NEWPID|syscall.CLONE_NEWNET, true, true, true)
		if root {
			add("netns", syscall.CLONE_NEWNET, false, false, true)
		}
		add("userns+netns", syscall.CLONE_NEWUSER|syscall.CLONE_NEWNET, true, false, true)
	}
	if root {
		add("pidns", syscall.CLONE_NEWPID, false, true, false)
	}
	add("userns+pidns", syscall.CLONE_NEWUSER|syscall.CLONE_NEWPID, true, true, false)
	add("process-group", 0, false, false, false)
	return out
}

var (
	probeMu sync.Mutex
	probed  = map[bool]level{}
)

// chooseLevel returns the most isolated level the kernel grants, found once
// per process by starting /bin/true under each candidate in turn.
func chooseLevel(denyNet bool) level {
	probeMu.Lock()
	defer probeMu.Unlock()
	if l, ok := probed[denyNet]; ok {
		return l
	}
	cands := candidates(denyNet)
	chosen := cands[len(cands)-1]
	for _, l := range cands[:len(cands)-1] {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = l.attr()
		if cmd.Run() == nil {
			chosen = l
			break
		}
	}
	probed[denyNet] = chosen
	return chosen
}

// Probe reports the isolation a command would get under a network policy
// ("deny" or "allow") and whether its network would be denied, for
// recording in environment fingerprints.
func Probe(network string) (isolation string, networkDenied bool) {
	l := chooseLevel(network != "allow")
	return l.name, l.net
}
