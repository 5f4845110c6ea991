package jail

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// Each test here performs an attack a candidate's code could make on the
// filesystem from inside a build, gate or bench run, then checks that it
// failed and that the host is unchanged.

func TestCandidateCannotWriteOutsideItsScratch(t *testing.T) {
	tier.Jail(t)
	hostDir := t.TempDir()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	marker := "hone-attack-" + strconv.Itoa(os.Getpid())
	targets := []string{
		filepath.Join(hostDir, marker),
		filepath.Join(home, marker),
		filepath.Join(os.TempDir(), marker),
		"/tmp/" + marker,
		"/" + marker,
		"/usr/" + marker,
		"/etc/" + marker,
	}
	cmd := ""
	for _, p := range targets {
		cmd += "echo pwned > " + p + " && echo wrote " + p + "; "
	}
	res := run(t, Spec{Command: cmd})
	if !strings.Contains(string(res.Stdout.Bytes()), "wrote /tmp/"+marker) {
		t.Errorf("the jail's own /tmp is not writable: %s", res.Stderr.Bytes())
	}
	for _, p := range targets {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("the jail wrote %s on the host", p)
		}
	}
	for _, p := range targets[:2] {
		if strings.Contains(string(res.Stdout.Bytes()), "wrote "+p) {
			t.Errorf("the jail could write %s (%s)", p, res.Stdout.Bytes())
		}
	}
}

func TestCandidateCannotSeeHostDirectories(t *testing.T) {
	tier.Jail(t)
	home, _ := os.UserHomeDir()
	hostDir := t.TempDir()
	writeFile(t, hostDir, "private", "secret\n", 0o644)
	res := run(t, Spec{Command: "for d in " + hostDir + " " + home + " /root /run /var/lib /var/log /opt /srv /mnt /sys /work /boot /media; do test -e $d && echo visible $d; done; ls -A / /home /var"})
	root := []string{".hone", "dev", "etc", "home", "proc", "tmp", "usr", "var"}
	for _, d := range systemDirs[1:] {
		if _, err := os.Lstat(d); err == nil {
			root = append(root, d[1:])
		}
	}
	slices.Sort(root)
	want := "/:\n" + strings.Join(root, "\n") + "\n\n/home:\nhone\n\n/var:\ntmp\n"
	if got := string(res.Stdout.Bytes()); got != want {
		t.Errorf("the jail sees:\n%s\nwant:\n%s", got, want)
	}
}

func TestCandidateCannotReadRootOnlyFile(t *testing.T) {
	tier.Jail(t)
	root(t)
	dir := t.TempDir()
	writeFile(t, dir, "key", "PRIVATE KEY\n", 0o600)
	res := run(t, Spec{Command: "cat /mnt/key", Mounts: []Mount{{Host: dir, Jail: "/mnt", Mode: ReadOnly}}})
	if res.Success() || strings.Contains(string(res.Stdout.Bytes()), "PRIVATE") {
		t.Errorf("read a root-owned 0600 file: %s %s", res.Describe(), res.Stdout.Bytes())
	}
	if !strings.Contains(string(res.Stderr.Bytes()), "Permission denied") {
		t.Errorf("stderr = %s", res.Stderr.Bytes())
	}
}

func TestCandidateCannotReadShadowOrHostSecrets(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "cat /etc/shadow /etc/gshadow /etc/sudoers; ls /etc/ssh /etc/ssl/private; ls /etc"})
	out := string(res.Stdout.Bytes())
	if strings.Contains(out, "root:") {
		t.Errorf("read a shadow file:\n%s", out)
	}
	for _, name := range strings.Fields(out) {
		if name != "passwd" && name != "group" && name != "hosts" && name != "nsswitch.conf" && !slices.Contains(etcFiles, name) {
			t.Errorf("/etc holds %s, which is not in the allowlist", name)
		}
	}
}

// A host file given as stdin could be reopened for writing through
// /proc/self/fd/0; the jail only ever gets a pipe.
func TestCandidateCannotReopenStdinOnTheHost(t *testing.T) {
	tier.Jail(t)
	p := writeFile(t, t.TempDir(), "input", "original\n", 0o666)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := run(t, Spec{Command: "cat; echo forged > /proc/self/fd/0", Stdin: f})
	if string(res.Stdout.Bytes()) != "original\n" {
		t.Errorf("stdin read %q", res.Stdout.Bytes())
	}
	if b, _ := os.ReadFile(p); string(b) != "original\n" {
		t.Errorf("the host file behind stdin now reads %q", b)
	}
}

func TestCandidateCannotFillScratchOrDev(t *testing.T) {
	tier.Jail(t)
	lim := Limits{Scratch: 4 << 20, Shm: 2 << 20}
	cmd := ""
	for _, p := range []string{"/tmp/f", "/var/tmp/f", "/home/hone/f", "/dev/shm/f", "/w/f", "/dev/f", "/f"} {
		cmd += "head -c 67108864 /dev/zero > " + p + "; "
	}
	cmd += "du -k /tmp/f /var/tmp/f /home/hone/f /dev/shm/f /w/f"
	res := run(t, Spec{Command: cmd, Limits: lim, Mounts: []Mount{{Host: t.TempDir(), Jail: "/w", Mode: Copy}}})
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout.Bytes())), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("du: %q", line)
		}
		kb, _ := strconv.Atoi(f[0])
		if int64(kb)*1024 > lim.Scratch {
			t.Errorf("%s grew to %d KiB past its limit", f[1], kb)
		}
	}
	for _, want := range []string{"cannot create /dev/f: Read-only file system", "cannot create /f: Read-only file system", "No space left on device"} {
		if !strings.Contains(string(res.Stderr.Bytes()), want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.Stderr.Bytes())
		}
	}
}

func TestCandidateCannotRememberBetweenRuns(t *testing.T) {
	tier.Jail(t)
	tree := t.TempDir()
	writeFile(t, tree, "input", "x\n", 0o644)
	places := []string{"/tmp/m", "/var/tmp/m", "/home/hone/m", "/dev/shm/m", "/w/m", "/w/input"}
	spec := Spec{Dir: "/w", Mounts: []Mount{{Host: tree, Jail: "/w", Mode: Copy}}}
	spec.Command = "for p in " + strings.Join(places, " ") + "; do echo remembered > $p; done; ipcmk -M 4096 >/dev/null; echo ok"
	if res := run(t, spec); string(res.Stdout.Bytes()) != "ok\n" {
		t.Fatalf("first run: %s %s", res.Stdout.Bytes(), res.Stderr.Bytes())
	}
	spec.Command = "cat " + strings.Join(places, " ") + " 2>/dev/null; ipcs -m | grep -c '^0x' || true"
	res := run(t, spec)
	if got := string(res.Stdout.Bytes()); got != "x\n0\n" {
		t.Errorf("the second run found what the first left:\n%s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(tree, "input")); string(b) != "x\n" {
		t.Errorf("the host copy changed: %q", b)
	}
}

func TestCandidateCannotWriteIntoReadOnlyMount(t *testing.T) {
	tier.Jail(t)
	dir := t.TempDir()
	writeFile(t, dir, "golden", "expected\n", 0o666)
	res := run(t, Spec{Command: "echo forged > /g/golden; echo new > /g/new; rm -f /g/golden; chmod 777 /g; cat /g/golden", Mounts: []Mount{{Host: dir, Jail: "/g", Mode: ReadOnly}}})
	if got := string(res.Stdout.Bytes()); got != "expected\n" {
		t.Errorf("golden file in the jail reads %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "golden")); string(b) != "expected\n" {
		t.Errorf("host golden file is now %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("host directory holds %d entries", len(ents))
	}
}

// When hone is root, a read-write mount is handed to the jail user before
// the run. A symlink planted in it (by an earlier run) must not hand over
// what it points to.
func TestCandidateCannotGainHostFilesThroughReadWriteMount(t *testing.T) {
	tier.Jail(t)
	root(t)
	out, secret := t.TempDir(), t.TempDir()
	target := writeFile(t, secret, "key", "PRIVATE\n", 0o600)
	if err := os.Symlink(target, filepath.Join(out, "planted")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(out, "planted-dir")); err != nil {
		t.Fatal(err)
	}
	res := run(t, Spec{Command: "echo built > /out/bin && cat /out/planted; ls /out/planted-dir", Mounts: []Mount{{Host: out, Jail: "/out", Mode: ReadWrite}}})
	if b, _ := os.ReadFile(filepath.Join(out, "bin")); string(b) != "built\n" {
		t.Errorf("the read-write mount is not writable: %s", res.Stderr.Bytes())
	}
	if strings.Contains(string(res.Stdout.Bytes()), "PRIVATE") {
		t.Error("read a host file through a planted symlink")
	}
	for _, p := range []string{target, secret} {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil || st.Uid != 0 {
			t.Errorf("%s now belongs to uid %d", p, st.Uid)
		}
	}
}

func TestCandidateCannotWriteThroughCopyIntoHost(t *testing.T) {
	tier.Jail(t)
	dir := t.TempDir()
	writeFile(t, dir, "golden", "expected\n", 0o666)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o777); err != nil {
		t.Fatal(err)
	}
	// The copy's read-only source and the meter's binary sit in /.hone.
	res := run(t, Spec{Command: "echo forged > /w/golden; echo new > /w/sub/new; rm -r /w/sub; ln -s /etc /w/link; " +
		"for f in /.hone/*/*/golden /.hone/hone-jail-init; do echo forged > $f; done; cat /w/golden", Mounts: []Mount{{Host: dir, Jail: "/w", Mode: Copy}}})
	if got := string(res.Stdout.Bytes()); got != "forged\n" {
		t.Errorf("the copy is not writable: %q %s", got, res.Stderr.Bytes())
	}
	if n := strings.Count(string(res.Stderr.Bytes()), "Read-only file system"); n != 2 {
		t.Errorf("want the copy's source and the meter read-only:\n%s", res.Stderr.Bytes())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "golden")); string(b) != "expected\n" {
		t.Errorf("host golden file is now %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("host directory changed: %d entries", len(ents))
	}
	if sub, _ := os.ReadDir(filepath.Join(dir, "sub")); len(sub) != 0 {
		t.Errorf("host sub directory changed: %d entries", len(sub))
	}
}
