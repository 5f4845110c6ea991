package jail

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

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
	v := &view{staged: acct.uid != os.Getuid()}
	for _, m := range s.Mounts {
		if err := checkMount(m, s.Mounts); err != nil {
			return nil, err
		}
		if m.Mode == ReadWrite && v.staged {
			if err := handOver(m.Host, acct); err != nil {
				return nil, err
			}
		}
	}
	cg := newCgroup()
	if cg != nil {
		defer cg.remove()
		if err := v.bind(filepath.Join(cg.dir, "cpu.stat"), meterDir+"/cpu.stat", false); err != nil {
			closeFiles(v.files)
			return nil, err
		}
	}
	args, err := v.build(s)
	if err != nil {
		closeFiles(v.files)
		return nil, err
	}
	p, shell := newPlan(s, Environment(s.Dir, s.Path, s.Env), s.Dir)
	p.Copies = v.copies
	if cg != nil {
		p.CPUStat = meterDir + "/cpu.stat"
	}

	var cmd *exec.Cmd
	if v.staged {
		cmd = exec.Command("/proc/self/exe")
		cmd.Args = append(append(append([]string{stagerName, strconv.Itoa(acct.uid), strconv.Itoa(acct.gid), bwrap, "--"}, v.stage...), "--"), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	} else {
		cmd = exec.Command(bwrap, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	}
	cmd.Dir = "/"
	res := &Result{Isolation: "full", NetworkDenied: s.Network == "deny", HostUID: acct.uid, Shell: shell}
	l := &launch{cmd: cmd, plan: p, files: v.files, cgroup: cg, kill: func(pid int) {
		// bwrap's death takes the meter with it (--die-with-parent), and
		// PID 1's death the whole namespace.
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}}
	return res, l.run(ctx, s, res)
}

// checkMount refuses what the jail cannot build: a missing host path, a Copy
// of something other than a directory, and a mount inside a Copy mount
// (the meter would have to copy into it).
func checkMount(m Mount, all []Mount) error {
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
	return nil
}

// handOver gives the tree at root to the jail user, who must write there.
// Symlinks are changed themselves, never followed.
func handOver(root string, a account) error {
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, a.uid, a.gid)
	})
	if err != nil {
		return errs.Wrap(errs.Failure, err, "jail: cannot give %s to the jail user", root)
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
