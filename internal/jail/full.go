package jail

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
)

// runFull runs s in the bwrap jail. When hone is root, bwrap is started as
// the jail user through the stager; otherwise hone starts it directly.
func runFull(ctx context.Context, s Spec) (*Result, error) {
	acct, err := jailAccount(s.User)
	if err != nil {
		return nil, err
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "jail: bwrap is not installed")
	}
	r, err := roleExecutable()
	if err != nil {
		return nil, err
	}
	v := &view{staged: acct.uid != os.Getuid(), roles: r}
	if err := checkMounts(s.Mounts); err != nil {
		return nil, err
	}
	for _, m := range s.Mounts {
		if m.Mode == ReadWrite && v.staged {
			if err := handOver(m.Host, acct); err != nil {
				return nil, err
			}
		}
	}
	p, shell := newPlan(s, Environment(s.Dir, s.Path, s.Env), s.Dir)
	cg := newCgroup()
	if cg != nil {
		defer cg.remove()
		v.cpuStat = filepath.Join(cg.dir, "cpu.stat")
		p.CPUStat = meterCPUStat
	}
	args, err := v.build(s)
	if err != nil {
		closeFiles(v.files)
		return nil, err
	}
	p.Copies = v.copies

	var cmd *exec.Cmd
	if v.staged {
		cmd = exec.Command(v.roles.start)
		cmd.Args = append(append(append([]string{stagerName, strconv.Itoa(acct.uid), strconv.Itoa(acct.gid), bwrap, "--"}, v.stage...), "--"), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	} else {
		cmd = exec.Command(bwrap, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	}
	cmd.Dir = "/"
	res := &Result{Isolation: "full", NetworkDenied: s.Network == "deny", HostUID: acct.uid, Shell: shell}
	if !s.Seccomp.Off {
		res.Seccomp = FilterVersion
	}
	l := &launch{cmd: cmd, plan: p, files: v.files, cgroup: cg, kill: func(pid int) {
		// bwrap's death takes the meter with it (--die-with-parent), and
		// PID 1's death the whole namespace.
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}}
	return l.run(ctx, s, res)
}

// checkMounts refuses what neither mode can build: a missing host path, a
// Copy of something other than a directory, and a mount inside a Copy mount
// (the meter would have to copy into it).
func checkMounts(all []Mount) error {
	for _, m := range all {
		fi, err := os.Stat(m.Host)
		if err != nil {
			return errs.Wrap(errs.NotFound, err, "jail: cannot mount %s at %s", m.Host, m.Jail)
		}
		if m.Mode == Copy && !fi.IsDir() {
			return errs.Invalidf("jail: %s is not a directory; only directories can be copied", m.Host)
		}
		for _, o := range all {
			if o.Mode == Copy && strings.HasPrefix(m.Jail, o.Jail+"/") {
				return errs.Invalidf("jail: mount %s is inside the copy at %s", m.Jail, o.Jail)
			}
		}
	}
	return nil
}

// handOver gives the tree at root to the jail user, who must write there.
// It walks by directory descriptor and never follows a symlink, so a tree
// changed under it (by a jail that shares the mount) cannot redirect a chown
// to a file outside it.
func handOver(root string, a account) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		defer unix.Close(fd)
		if err = unix.Fchown(fd, a.uid, a.gid); err == nil {
			err = chownTree(fd, a)
		}
	}
	if err != nil {
		return errs.Wrap(errs.Failure, err, "jail: cannot give %s to the jail user", root)
	}
	return nil
}

func chownTree(dir int, a account) error {
	dup, err := unix.Dup(dir)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), "")
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := unix.Fchownat(dir, name, a.uid, a.gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		sub, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			continue
		}
		if err != nil {
			return err
		}
		err = chownTree(sub, a)
		unix.Close(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// sortedMounts orders mounts so that a directory comes before what is
// mounted inside it.
func sortedMounts(ms []Mount) []Mount {
	out := append([]Mount{}, ms...)
	sort.Slice(out, func(i, j int) bool { return out[i].Jail < out[j].Jail })
	return out
}
