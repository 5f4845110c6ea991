package jail

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A run's cgroup catches the CPU time that rusage cannot: a process whose
// parent ignores SIGCHLD (or sets SA_NOCLDWAIT) is reaped by the kernel
// itself, and its CPU time never reaches anyone's RUSAGE_CHILDREN. A cgroup
// v2 directory counts every task that ever ran in it, whoever reaped it. The
// jail's process is cloned straight into a fresh cgroup (CLONE_INTO_CGROUP),
// and whatever the cgroup counted beyond the rusage hone gets back from
// wait4 was spent by such processes.
//
// Only cgroup v2 is used, and only where hone may create a cgroup below its
// own (root, or a delegated subtree): without one, Result.Cgroup is false
// and that CPU time goes uncounted.
type cgroup struct {
	dir string
	fd  *os.File
}

var (
	cgroupOnce sync.Once
	cgroupBase string // "" when hone cannot create cgroups
	cgroupSeq  atomic.Int64
)

// newCgroup returns a fresh cgroup for one run, or nil when there is none to
// be had here.
func newCgroup() *cgroup {
	base := runCgroupBase()
	if base == "" {
		return nil
	}
	dir := filepath.Join(base, fmt.Sprintf("hone-jail-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	fd, err := os.Open(dir)
	if err != nil {
		os.Remove(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: fd}
}

// runCgroupBase is the directory run cgroups are made in, or "" when hone
// cannot create cgroups here.
func runCgroupBase() string {
	cgroupOnce.Do(func() { cgroupBase = findCgroupBase() })
	return cgroupBase
}

// findCgroupBase locates hone's own cgroup v2 directory and checks that a
// process can be cloned into a child of it.
func findCgroupBase() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	own := ""
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil || own == "" {
		return ""
	}
	defer f.Close()
	base := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source super
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || sep+1 >= len(fields) || fields[sep+1] != "cgroup2" {
			continue
		}
		// The mount may show only a subtree (its root) of the hierarchy.
		rel := own
		if root := fields[3]; root != "/" {
			var ok bool
			if rel, ok = strings.CutPrefix(own, root); !ok || rel != "" && rel[0] != '/' {
				continue
			}
		}
		base = filepath.Join(fields[4], rel)
		break
	}
	if base == "" || unix.Access(base, unix.W_OK) != nil {
		return ""
	}
	if !cloneInto(base) {
		return ""
	}
	return base
}

// cloneInto checks that a process can be started straight into a fresh
// cgroup below base (CLONE_INTO_CGROUP needs Linux 5.7).
func cloneInto(base string) bool {
	dir := filepath.Join(base, fmt.Sprintf("hone-jail-%d-0", os.Getpid()))
	if os.Mkdir(dir, 0o755) != nil {
		return false
	}
	defer os.Remove(dir)
	fd, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer fd.Close()
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(fd.Fd())}
	return cmd.Run() == nil
}

// KillLeftovers kills whatever the jails of hones that died left running,
// and returns how many processes it killed. A hone killed with SIGKILL
// takes its jail with it (the stager and bwrap have a parent-death
// signal), but a known bubblewrap race (containers/bubblewrap#633) leaves
// bwrap's own child running when its parent dies while it starts: it never
// gets its signal, and sleeps forever, holding its namespaces and mounts.
//
// Every jail process is started inside its run's cgroup and cannot leave
// it, so where hone makes run cgroups, killing the cgroups of dead hones
// kills exactly their leftovers, for root and a delegated user alike.
// Without cgroups, root falls back to the jail user's orphans
// (killOrphans).
func KillLeftovers() (int, error) {
	base := runCgroupBase()
	if base == "" {
		return killOrphans()
	}
	return sweepCgroups(base), nil
}

// sweepCgroups kills the processes in the hone-jail-<pid>-<n> cgroups whose
// hone is dead, removes those cgroups, and returns how many processes it
// found in them.
func sweepCgroups(base string) int {
	ents, _ := os.ReadDir(base)
	killed := 0
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "hone-jail-")
		if !ok {
			continue
		}
		if pid, err := strconv.Atoi(strings.Split(rest, "-")[0]); err == nil && !alive(pid) {
			dir := filepath.Join(base, e.Name())
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			killed += len(strings.Fields(string(b)))
			removeCgroup(dir)
		}
	}
	return killed
}

// alive reports whether a process pid exists (in hone's PID namespace).
func alive(pid int) bool { return !errors.Is(unix.Kill(pid, 0), unix.ESRCH) }

func (c *cgroup) remove() {
	c.fd.Close()
	removeCgroup(c.dir)
}

// removeCgroup removes a run's cgroup, killing what still runs in it
// first, and gives up after a second.
func removeCgroup(dir string) {
	for i := 0; i < 100; i++ {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		time.Sleep(10 * time.Millisecond)
	}
}
