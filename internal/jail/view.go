package jail

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
)

// view builds the bwrap arguments that make the jail's filesystem: an
// allowlist of the host, never the host's root.
type view struct {
	// staged means the root stager binds the host directories first (see
	// stagerMain): bwrap, running as the jail user, may be unable to reach
	// them by path.
	staged bool
	roles  roles // where the stager and the meter start from
	args   []string
	files  []*os.File
	stage  []string // fd:path pairs the stager binds under stageDir
	copies []copyOp
	// cpuStat, when set, is the host path of the run's cgroup cpu.stat,
	// bound at meterCPUStat for the meter to read.
	cpuStat string
}

const meterCPUStat = meterDir + "/cpu.stat"

// jailUID is the uid (and gid) the command has inside the jail.
const jailUID = "1000"

// etcFiles are the host files of /etc the jail may read: what the dynamic
// loader, the compiler drivers (cc is /etc/alternatives/cc), time and
// service-name lookups need, and nothing with secrets in it.
var etcFiles = []string{
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone",
	"os-release", "debian_version", "services", "protocols",
}

// etcNetFiles are added when the network is allowed: name resolution and the
// certificate store.
var etcNetFiles = []string{"resolv.conf", "gai.conf", "ssl/certs"}

// Synthesized files of /etc: one user, hone (uid 1000, HOME /home/hone), and
// nobody, which host files owned by ids not mapped into the jail show as.
// nsswitch.conf is hone's own, not the host's: the host's may name NSS
// modules (systemd, sss, ldap) that would try to reach daemons the jail
// cannot see.
const (
	etcPasswd   = "hone:x:1000:1000:hone:/home/hone:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
	etcGroup    = "hone:x:1000:\nnogroup:x:65534:\n"
	etcHosts    = "127.0.0.1\tlocalhost hone-jail\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	etcNsswitch = "passwd: files\ngroup: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n"
)

// devices are bound into the jail's /dev. No tty, ptmx or pts: the command
// has no controlling terminal (bwrap --new-session) and pipes for stdio, and
// the host's pseudo-terminals are not its business.
var devices = []string{"null", "zero", "full", "random", "urandom"}

func (v *view) add(args ...string) { v.args = append(v.args, args...) }

// fd passes f to bwrap and returns its fd number there.
func (v *view) fd(f *os.File) string {
	v.files = append(v.files, f)
	return strconv.Itoa(firstFD + len(v.files) - 1)
}

// build returns bwrap's arguments for s, up to and including the meter.
func (v *view) build(s Spec) ([]string, error) {
	v.add("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
		"--new-session", "--as-pid-1", "--cap-drop", "ALL", "--uid", jailUID, "--gid", jailUID,
		"--hostname", "hone-jail", "--clearenv")
	if s.Network == "allow" {
		v.add("--share-net")
	}
	v.add("--ro-bind", "/usr", "/usr")
	for _, d := range systemDirs[1:] {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, errs.Wrap(errs.Failure, err, "jail: cannot read %s", d)
			}
			v.add("--symlink", target, d)
		case fi.IsDir():
			v.add("--ro-bind", d, d)
		}
	}
	if err := v.etc(s.Network == "allow"); err != nil {
		return nil, err
	}
	v.tmpfs(s.Limits.Scratch, "1777", jailTmp)
	v.tmpfs(s.Limits.Scratch, "1777", "/var/tmp")
	v.tmpfs(s.Limits.Scratch, "0755", jailHome)
	v.dev(s.Limits.Shm)
	v.add("--proc", "/proc")
	for _, p := range s.ReadOnly {
		if err := v.bind(p, p, false); err != nil {
			return nil, err
		}
	}
	for i, m := range sortedMounts(s.Mounts) {
		var err error
		switch m.Mode {
		case ReadOnly, ReadWrite:
			err = v.bind(m.Host, m.Jail, m.Mode == ReadWrite)
		case Copy:
			src := meterDir + "/copy/" + strconv.Itoa(i)
			err = v.bind(m.Host, src, false)
			v.tmpfs(s.Limits.Scratch, "0755", m.Jail)
			v.copies = append(v.copies, copyOp{From: src, To: m.Jail})
		}
		if err != nil {
			return nil, err
		}
	}
	if v.cpuStat != "" {
		if err := v.bind(v.cpuStat, meterCPUStat, false); err != nil {
			return nil, err
		}
	}
	if err := v.bind(v.roles.file, meterDir+"/"+meterName, false); err != nil {
		return nil, err
	}
	if err := v.filter(s); err != nil {
		return nil, err
	}
	v.add("--remount-ro", "/", "--chdir", "/", "--", meterDir+"/"+meterName)
	return v.args, nil
}

// filter hands bwrap the system call filter, which it installs on the
// meter and so on everything the meter starts.
func (v *view) filter(s Spec) error {
	if s.Seccomp.Off {
		return nil
	}
	b, err := filterBytes(s.Seccomp, s.Tool != "")
	if err != nil {
		return err
	}
	r, err := v.pipe(b, "the system call filter")
	if err != nil {
		return err
	}
	v.add("--seccomp", v.fd(r))
	return nil
}

func (v *view) tmpfs(size int64, perms, dest string) {
	v.add("--size", strconv.FormatInt(size, 10), "--perms", perms, "--tmpfs", dest)
}

// bind makes the host path visible at dest through a file descriptor opened
// here: bwrap (0.8 with the --bind-fd backport) checks after mounting that it
// mounted the very file the descriptor names, so a symlink swapped into the
// host path in the meantime makes it fail rather than mount something else.
func (v *view) bind(host, dest string, rw bool) error {
	fd, err := unix.Open(host, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		code := errs.Failure
		if err == unix.ENOENT {
			code = errs.NotFound
		}
		return errs.Wrap(code, err, "jail: cannot open %s to mount it at %s", host, dest)
	}
	n := v.fd(os.NewFile(uintptr(fd), host))
	opt := "--ro-bind"
	if rw {
		opt = "--bind"
	}
	if v.staged {
		v.stage = append(v.stage, n+":"+host)
		v.add(opt, stageDir+"/"+n, dest)
		return nil
	}
	v.add(opt+"-fd", n, dest)
	return nil
}

// data puts content at dest, read-only, through a pipe.
func (v *view) data(content, dest string) error {
	r, err := v.pipe([]byte(content), dest)
	if err != nil {
		return err
	}
	v.add("--perms", "0644", "--ro-bind-data", v.fd(r), dest)
	return nil
}

// pipe returns the read end of a pipe that holds b, for bwrap to read.
func (v *view) pipe(b []byte, what string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "jail: cannot create a pipe")
	}
	// Far below a pipe's capacity: the write cannot block before bwrap reads.
	_, err = w.Write(b)
	w.Close()
	if err != nil {
		r.Close()
		return nil, errs.Wrap(errs.Failure, err, "jail: cannot write %s", what)
	}
	return r, nil
}

func (v *view) etc(net bool) error {
	v.tmpfs(1<<20, "0755", "/etc")
	for _, f := range []struct{ content, dest string }{
		{etcPasswd, "/etc/passwd"}, {etcGroup, "/etc/group"}, {etcHosts, "/etc/hosts"}, {etcNsswitch, "/etc/nsswitch.conf"},
	} {
		if err := v.data(f.content, f.dest); err != nil {
			return err
		}
	}
	files := etcFiles
	if net {
		files = append(append([]string{}, etcFiles...), etcNetFiles...)
	}
	for _, f := range files {
		if _, err := os.Stat("/etc/" + f); err == nil {
			v.add("--ro-bind", "/etc/"+f, "/etc/"+f)
		}
	}
	v.add("--remount-ro", "/etc")
	return nil
}

// dev builds a small /dev that cannot be written to, with /dev/shm the only
// writable (size-limited) place in it. bwrap's own --dev is an unlimited
// writable tmpfs.
func (v *view) dev(shm int64) {
	v.tmpfs(64<<10, "0755", "/dev")
	for _, d := range devices {
		v.add("--dev-bind", "/dev/"+d, "/dev/"+d)
	}
	v.add("--symlink", "/proc/self/fd", "/dev/fd",
		"--symlink", "/proc/self/fd/0", "/dev/stdin",
		"--symlink", "/proc/self/fd/1", "/dev/stdout",
		"--symlink", "/proc/self/fd/2", "/dev/stderr")
	v.tmpfs(shm, "1777", "/dev/shm")
	v.add("--remount-ro", "/dev")
}
