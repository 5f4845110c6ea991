package jail

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// stageDir is where the stager binds the host paths, in its own mount
// namespace: on top of /tmp, which bwrap then covers with its own root
// tmpfs, so nothing of it is visible in the jail.
const stageDir = "/tmp"

// stagerMain prepares a jail for root. bwrap resolves every bind source by
// path as the user it runs as, and the jail user may not be allowed to
// traverse the way to a checkout under /root. So the stager, still root but
// in a private mount namespace (hone starts it with CLONE_NEWNS), binds each
// host path onto stageDir/<fd>, a path anyone can reach, then becomes the
// jail user and execs bwrap. The host's mount table never changes.
//
// The kernel refuses to bind a descriptor opened in another mount
// namespace, so the stager binds the path and then checks that it mounted
// the very file hone's descriptor names (as bwrap does for --bind-fd): a
// symlink swapped into the path in the meantime fails the run.
//
// args: uid gid bwrap -- fd:path... -- bwrap-arguments...
func stagerMain(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, stagerName+": "+format+"\n", a...)
		return 1
	}
	if len(args) < 4 || args[3] != "--" {
		return fail("bad arguments")
	}
	uid, err1 := strconv.Atoi(args[0])
	gid, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || uid == 0 {
		return fail("bad user %s:%s", args[0], args[1])
	}
	ppid := os.Getppid()
	sep := 4
	for sep < len(args) && args[sep] != "--" {
		sep++
	}
	if sep == len(args) {
		return fail("bad arguments")
	}
	// Open every path before the staging tmpfs hides /tmp: a source may
	// live there.
	var staged []staging
	for _, a := range args[4:sep] {
		n, path, _ := strings.Cut(a, ":")
		st, err := open(n, path)
		if err != nil {
			return fail("cannot mount %s: %v", path, err)
		}
		staged = append(staged, st)
	}
	if err := unix.Mount("tmpfs", stageDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64k"); err != nil {
		return fail("cannot mount a tmpfs on %s: %v", stageDir, err)
	}
	for _, st := range staged {
		if err := st.mount(); err != nil {
			return fail("cannot mount %s: %v", st.path, err)
		}
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fail("setgroups: %v", err)
	}
	if err := syscall.Setresgid(gid, gid, gid); err != nil {
		return fail("setresgid: %v", err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fail("setresuid: %v", err)
	}
	// Changing uid cleared the parent-death signal hone asked for.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fail("cannot set the parent-death signal: %v", err)
	}
	if os.Getppid() != ppid {
		return 1
	}
	err := syscall.Exec(args[2], append([]string{"bwrap"}, args[sep+1:]...), []string{})
	return fail("cannot run %s: %v", args[2], err)
}

// staging is one host path on its way to stageDir/<fd>.
type staging struct {
	fd, own int // hone's descriptor, and the stager's of the same file
	path    string
	dir     bool
}

// open opens path in the stager's namespace, where the kernel lets it be
// bound, and checks it is the file hone's descriptor n names.
func open(n, path string) (staging, error) {
	fd, err := strconv.Atoi(n)
	if err != nil {
		return staging{}, fmt.Errorf("bad descriptor %q", n)
	}
	own, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return staging{}, err
	}
	var want, got unix.Stat_t
	if err := unix.Fstat(fd, &want); err != nil {
		return staging{}, err
	}
	if err := unix.Fstat(own, &got); err != nil {
		return staging{}, err
	}
	if got.Dev != want.Dev || got.Ino != want.Ino {
		return staging{}, fmt.Errorf("it changed while the jail was being built")
	}
	// A descriptor of a host directory inside the jail would be a way out
	// of it (openat(fd, "..")).
	unix.CloseOnExec(fd)
	return staging{fd: fd, own: own, path: path, dir: want.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
}

func (s staging) mount() error {
	target := stageDir + "/" + strconv.Itoa(s.fd)
	if s.dir {
		if err := unix.Mkdir(target, 0o755); err != nil {
			return err
		}
	} else {
		f, err := unix.Open(target, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return err
		}
		unix.Close(f)
	}
	// The kernel follows /proc/self/fd/N to the open file itself, not to
	// a path that could have changed.
	err := unix.Mount("/proc/self/fd/"+strconv.Itoa(s.own), target, "", unix.MS_BIND|unix.MS_REC, "")
	unix.Close(s.own)
	return err
}
