package jail

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hone-perf/hone/internal/errs"
)

// runWeak runs the meter on the host, without bwrap, under the most
// isolation the kernel grants without it. Jail paths become host paths: each
// mount's host directory, a per-run copy for Copy mounts, and per-run
// directories for HOME and TMPDIR.
func runWeak(ctx context.Context, s Spec) (*Result, error) {
	if err := checkMounts(s.Mounts); err != nil {
		return nil, err
	}
	lvl := chooseLevel(s.Network == "deny")
	sweepOnce.Do(sweepScratch)
	scratch, err := os.MkdirTemp("", scratchPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "jail: cannot create a scratch directory")
	}
	defer os.RemoveAll(scratch)
	home, tmp := filepath.Join(scratch, "home"), filepath.Join(scratch, "tmp")
	tr := translation{{jailHome, home}, {jailTmp, tmp}}
	var copies []copyOp
	for i, m := range s.Mounts {
		host := m.Host
		if m.Mode == Copy {
			host = filepath.Join(scratch, "copy", strconv.Itoa(i))
			copies = append(copies, copyOp{From: m.Host, To: host})
		}
		tr = append(tr, [2]string{m.Jail, host})
	}
	for _, d := range append([]string{home, tmp}, copyDests(copies)...) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, errs.Wrap(errs.Failure, err, "jail: cannot create a scratch directory")
		}
	}
	sort.Slice(tr, func(i, j int) bool { return len(tr[i][0]) > len(tr[j][0]) })

	dir := tr.host(s.Dir)
	path := make([]string, len(s.Path))
	for i, p := range s.Path {
		path[i] = tr.host(p)
	}
	extra := make([]string, len(s.Env))
	for i, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		extra[i] = k + "=" + tr.host(v)
	}
	p, shell := newPlan(s, environment(dir, path, extra, home, tmp), dir)
	p.Copies = copies
	cg := newCgroup()
	if cg != nil {
		defer cg.remove()
		p.CPUStat = filepath.Join(cg.dir, "cpu.stat")
	}
	if !lvl.user {
		// Without a user namespace RLIMIT_NPROC counts every process of the
		// user on the host (and root ignores it): it would stop the wrong
		// forks or none.
		p.Rlimits.NProc = 0
	}

	r, err := roleExecutable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.start)
	cmd.Args = []string{meterName}
	cmd.Dir = "/"
	cmd.SysProcAttr = lvl.attr()
	res := &Result{Isolation: lvl.name, NetworkDenied: lvl.net, HostUID: os.Getuid(), Shell: shell}
	l := &launch{cmd: cmd, plan: p, cgroup: cg, kill: func(pid int) {
		// The negative pid reaches the process group (Setpgid), the
		// positive one the meter, whose death ends a PID namespace.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}}
	res, err = l.run(ctx, s, res)
	if res != nil && !lvl.pid {
		// Whatever escaped the meter's reaping in its group goes too; a
		// live member keeps the group id from being reused.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return res, err
}

// scratchPrefix names weak runs' scratch directories, followed by the pid
// of the hone that made them.
const scratchPrefix = "hone-jail-weak-"

var sweepOnce sync.Once

// sweepScratch removes the scratch directories of hone processes that died
// (killed, say) before removing their own.
func sweepScratch() {
	ents, _ := os.ReadDir(os.TempDir())
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), scratchPrefix)
		if !ok {
			continue
		}
		if pid, err := strconv.Atoi(strings.Split(rest, "-")[0]); err == nil && !alive(pid) {
			_ = os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

func copyDests(c []copyOp) []string {
	out := make([]string, len(c))
	for i, op := range c {
		out[i] = op.To
	}
	return out
}

// translation maps jail path prefixes to host paths, longest first.
type translation [][2]string

func (t translation) host(p string) string {
	for _, pair := range t {
		if p == pair[0] || strings.HasPrefix(p, pair[0]+"/") {
			return pair[1] + p[len(pair[0]):]
		}
	}
	return p
}

// level is one way of starting the weak meter, from most to least isolated.
type level struct {
	name  string
	flags uintptr // clone flags
	user  bool    // a user namespace mapping our uid/gid to root inside
	pid   bool
	net   bool
}

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
	levelMu sync.Mutex
	levels  = map[bool]level{}
)

// chooseLevel returns the most isolated level the kernel grants, found once
// per process by starting /bin/true under each candidate in turn.
func chooseLevel(denyNet bool) level {
	levelMu.Lock()
	defer levelMu.Unlock()
	if l, ok := levels[denyNet]; ok {
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
	levels[denyNet] = chosen
	return chosen
}
