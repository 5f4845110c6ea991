package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/verdict"
)

// An arena is the workspace the attack suite shares: a repository with one
// C target built by make, gated by a self-test and a golden file, and all
// the secrets and host resources an attack goes for, each with the tag
// that lets the test find what an attack left behind.
type arena struct {
	t      *testing.T
	uid    int    // who hone runs as: 0, or 65534 through setpriv
	hone   string // the hone binary
	repo   string
	home   string // hone's HOME, with an SSH key in it
	tmp    string // hone's TMPDIR and the test's scratch
	ro     string // a [sandbox] read_only folder with a root-only file and socket
	tag    string // in every name and argv an attack makes
	secret string // in hone's environment, the SSH key and the root-only file
	port   int    // a TCP listener on the host's loopback
	dialed atomic.Int64
	// skipCache leaves the build cache out of snapshots, for a case that
	// makes hone rebuild it.
	skipCache bool
	dir       string // the testdata folder the target comes from
}

// file is a file of the arena's testdata folder.
func (a *arena) file(name string) string {
	a.t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", a.dir, name))
	if err != nil {
		a.t.Fatal(err)
	}
	return string(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func attackFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "attack", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newArena makes the attack suite's workspace for hone running as uid (0
// or 65534).
func newArena(t *testing.T, uid int) *arena {
	return openArena(t, uid, "attack", func(a *arena) map[string]string {
		return map[string]string{
			"hone.toml":                    strings.ReplaceAll(attackFile(t, "hone.toml"), "@RODIR@", a.ro),
			"targets/c/prog.c":             attackFile(t, "prog.c"),
			"targets/c/Makefile":           attackFile(t, "Makefile"),
			"targets/c/test.sh":            attackFile(t, "test.sh"),
			"targets/c/testdata/golden.sh": attackFile(t, "golden.sh"),
			"targets/c/testdata/expected":  a.expected(),
		}
	})
}

// openArena makes a shared workspace, whose files (path -> content) come
// from files, for hone running as uid (0 or 65534). Its folders are
// world-traversable so that the other uid can run.
func openArena(t *testing.T, uid int, dir string, files func(a *arena) map[string]string) *arena {
	if testing.Short() {
		t.Skip("the attack suite runs dozens of verdicts")
	}
	for _, tool := range []string{"cc", "make", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	a := &arena{t: t, uid: uid, tag: "honeattack" + randomHex(4), secret: "hone-secret-" + randomHex(8), dir: dir}
	base, err := os.MkdirTemp("", "hone-arena-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	a.repo, a.home, a.tmp, a.ro = filepath.Join(base, "repo"), filepath.Join(base, "home"), filepath.Join(base, "tmp"), filepath.Join(base, "ro")
	for _, d := range []string{a.repo, a.home, a.tmp, a.ro} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a.hone = a.binary(base)
	a.secrets()
	a.listen()

	for name, content := range files(a) {
		p := filepath.Join(a.repo, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if uid != 0 {
		for _, d := range []string{a.repo, a.home, a.tmp} {
			if out, err := exec.Command("chown", "-R", strconv.Itoa(uid)+":"+strconv.Itoa(uid), d).CombinedOutput(); err != nil {
				t.Fatalf("chown: %v %s", err, out)
			}
		}
	}
	a.git("init", "-q", "-b", "main")
	a.git("add", "-A")
	a.git("commit", "-q", "-m", "the pin")
	a.mustHone("init")
	// A file only hone's state holds, for attacks on the state folder.
	a.writeAs(filepath.Join(a.repo, ".git", "hone", "canary"), "canary\n")
	return a
}

// binary is hone (this test binary under that name) where uid may run it.
func (a *arena) binary(base string) string {
	src, err := exec.LookPath("hone")
	if err != nil {
		a.t.Fatal(err)
	}
	if a.uid == 0 {
		return src
	}
	// The test binary under testscript's name for it: hone.
	dst := filepath.Join(base, "bin", "hone")
	os.Mkdir(filepath.Dir(dst), 0o755)
	testproc.CopyExecutable(a.t, dst)
	return dst
}

// secrets places the secret where attacks look for it: an SSH key in
// hone's HOME, and a file only root may read in the read_only folder.
func (a *arena) secrets() {
	ssh := filepath.Join(a.home, ".ssh")
	os.Mkdir(ssh, 0o700)
	if err := os.WriteFile(filepath.Join(ssh, "id_ed25519"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"+a.secret+"\n"), 0o600); err != nil {
		a.t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a.home, ".bashrc"), []byte("# the user's\n"), 0o644)
	if err := os.WriteFile(filepath.Join(a.ro, "secret"), []byte(a.secret+"\n"), 0o600); err != nil {
		a.t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a.ro, "toolchain.txt"), []byte("a toolchain file\n"), 0o644)
}

// listen opens what the network attacks try to reach: a TCP port on the
// host's loopback, a root-only Unix socket in the read_only folder, and an
// abstract Unix socket of the host's network namespace. Every connection
// that arrives is counted.
func (a *arena) listen() {
	accept := func(l net.Listener) {
		a.t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				a.dialed.Add(1)
				c.Close()
			}
		}()
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.t.Fatal(err)
	}
	a.port = tcp.Addr().(*net.TCPAddr).Port
	accept(tcp)
	sock, err := net.Listen("unix", filepath.Join(a.ro, "sock"))
	if err != nil {
		a.t.Fatal(err)
	}
	os.Chmod(filepath.Join(a.ro, "sock"), 0o600)
	accept(sock)
	abstract, err := net.Listen("unix", "@"+a.tag)
	if err != nil {
		a.t.Fatal(err)
	}
	accept(abstract)
}

// expected is the pin's output, which the golden gate compares against.
func (a *arena) expected() string {
	exe := filepath.Join(a.tmp, "prog-expected")
	src := filepath.Join(a.tmp, "prog.c")
	os.WriteFile(src, []byte(attackFile(a.t, "prog.c")), 0o644)
	if out, err := exec.Command("cc", "-O2", "-o", exe, src).CombinedOutput(); err != nil {
		a.t.Fatalf("cc: %v %s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		a.t.Fatal(err)
	}
	os.Remove(exe)
	os.Remove(src)
	return string(out)
}

// command runs name as the arena's user, in the repository.
func (a *arena) command(name string, args ...string) *exec.Cmd {
	if a.uid != 0 {
		args = append([]string{"--reuid=" + strconv.Itoa(a.uid), "--regid=" + strconv.Itoa(a.uid), "--clear-groups", "--", name}, args...)
		name = "setpriv"
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = a.repo
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + a.home, "TMPDIR=" + a.tmp, "LANG=C", "NO_COLOR=1",
		"GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
		"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "HONE_ATTACK_SECRET=" + a.secret,
	}
	return cmd
}

func (a *arena) git(args ...string) string {
	a.t.Helper()
	var stderr bytes.Buffer
	cmd := a.command("git", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		a.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// runHone runs hone with args and returns its stdout, stderr and exit code.
func (a *arena) runHone(args ...string) (string, string, int) {
	var stdout, stderr bytes.Buffer
	cmd := a.command(a.hone, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		a.t.Fatalf("hone %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), code
}

func (a *arena) mustHone(args ...string) string {
	a.t.Helper()
	out, errOut, code := a.runHone(args...)
	if code != 0 {
		a.t.Fatalf("hone %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// writeAs writes a file the arena's user owns.
func (a *arena) writeAs(p, content string) {
	a.t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		a.t.Fatal(err)
	}
	if a.uid != 0 {
		os.Chown(p, a.uid, a.uid)
	}
}

// propose turns files (paths below targets/c, whole contents) into a
// diff against the pin, proposes it, and puts the working tree back.
func (a *arena) propose(hypothesis string, files map[string]string) string {
	a.t.Helper()
	diff := a.diff(files)
	return a.proposeDiff(hypothesis, diff)
}

func (a *arena) diff(files map[string]string) string {
	a.t.Helper()
	for name, content := range files {
		p := filepath.Join(a.repo, "targets", "c", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		a.writeAs(p, content)
		a.git("add", "-N", "--", filepath.Join("targets", "c", name))
	}
	d := a.git("diff")
	a.git("reset", "-q", "--hard")
	a.git("clean", "-fdq", "--", "targets")
	return d + "\n"
}

func (a *arena) proposeDiff(hypothesis, diff string) string {
	a.t.Helper()
	file := filepath.Join(a.tmp, "patch.diff")
	a.writeAs(file, diff)
	out := a.mustHone("patch", "propose", "c", "--hotspot", "walk", "--class", "1", "--hypothesis", hypothesis, "--file", file, "--json")
	var p struct {
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.PatchID == "" {
		a.t.Fatalf("propose: %v\n%s", err, out)
	}
	return p.PatchID
}

// verdict runs hone verdict on a patch and returns the entry and the raw
// JSON, which holds everything the entry says (output tails included).
func (a *arena) verdict(id string) (*verdict.Entry, string) {
	a.t.Helper()
	out := a.mustHone("verdict", id, "--json")
	var e verdict.Entry
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		a.t.Fatalf("verdict JSON: %v\n%s", err, out)
	}
	a.t.Logf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	return &e, out
}

// snapshot is what of the host an attack might change: the repository's
// files and refs (hone's own ledger, notes and patch refs aside), its git
// configuration, hooks and attributes, hone's state folder (the ledger's
// index cache aside), and the user's HOME.
type snapshot map[string]string

func (a *arena) snapshot() snapshot {
	a.t.Helper()
	s := snapshot{}
	hash := func(root, prefix string, skip func(rel string) bool) {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if skip != nil && skip(rel) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return nil
			}
			v := fi.Mode().String()
			if fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				sum := sha256.Sum256(b)
				v += " " + hex.EncodeToString(sum[:])
			} else if fi.Mode()&os.ModeSymlink != 0 {
				l, _ := os.Readlink(p)
				v += " -> " + l
			}
			s[prefix+rel] = v
			return nil
		})
	}
	hash(a.repo, "repo/", func(rel string) bool { return rel == ".git" })
	git := filepath.Join(a.repo, ".git")
	for _, f := range []string{"config", "hooks", "info", "HEAD", "packed-refs"} {
		hash(filepath.Join(git, f), ".git/"+f+"/", nil)
	}
	hash(filepath.Join(git, "hone"), ".git/hone/", func(rel string) bool {
		// The ledger's lookup index, its anchor, its cache of checked
		// signatures and the locks (verdicts/ holds one per judged patch)
		// change with every append; run folders must be gone, which gc
		// checks.
		return strings.HasPrefix(rel, "ledger.") || strings.HasPrefix(rel, ".ledger.") || rel == "signatures" || rel == "verdicts" ||
			strings.HasSuffix(rel, ".lock") || rel == "runs" || rel == "apply" ||
			a.skipCache && rel == "build-cache"
	})
	// hone runs go on the host (its version, for the fingerprint), and go
	// counts that in the user's telemetry: hone's own doing, not a jail's.
	hash(a.home, "home/", func(rel string) bool { return rel == ".config" || rel == ".config/go" || rel == ".config/go/telemetry" })
	for _, line := range strings.Split(a.git("for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		ref, obj, _ := strings.Cut(line, " ")
		if strings.HasPrefix(ref, "refs/hone/patches/") || ref == "refs/heads/hone/ledger" || ref == "refs/notes/hone" {
			continue
		}
		s["ref "+ref] = obj
	}
	return s
}

// ledgerEntries lists the ids of every ledger entry.
func (a *arena) ledgerEntries() map[string]bool {
	a.t.Helper()
	var es []struct {
		ID      string `json:"id"`
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(a.mustHone("ledger", "list", "--json")), &es); err != nil {
		a.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range es {
		out[e.ID+" "+e.PatchID] = true
	}
	return out
}

// unchanged checks the host after a case: the snapshot, a ledger that only
// gained the case's proposal and verdict and still verifies, a build cache
// whose every entry matches its manifest with no leftover run folder, no
// file of the case in the host's /tmp or /dev/shm, no process of the case
// alive, no connection received, and the secret nowhere in the verdict.
func (a *arena) unchanged(before snapshot, ledger map[string]bool, patch, raw string) {
	a.t.Helper()
	after := a.snapshot()
	var diffs []string
	for k, v := range before {
		if after[k] != v {
			diffs = append(diffs, k+": "+v+" -> "+after[k])
		}
	}
	for k, v := range after {
		// The first baseline of a pin is a new cache entry (what it holds
		// is checked by hone gc below); changing an entry is not allowed.
		if _, ok := before[k]; !ok && !strings.HasPrefix(k, ".git/hone/build-cache") && !strings.HasPrefix(k, ".git/hone/gocache-") {
			diffs = append(diffs, k+": new "+v)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		a.t.Errorf("the host changed:\n%s", strings.Join(diffs, "\n"))
	}
	for e := range a.ledgerEntries() {
		if !ledger[e] && !strings.HasSuffix(e, " "+patch) {
			a.t.Errorf("a ledger entry appeared that is not this patch's: %s", e)
		}
	}
	a.mustHone("ledger", "verify")
	var gc struct {
		Leftovers struct{ Items int } `json:"leftovers"`
		Damaged   struct{ Items int } `json:"damaged"`
	}
	if err := json.Unmarshal([]byte(a.mustHone("gc", "--json")), &gc); err != nil {
		a.t.Fatal(err)
	}
	if gc.Leftovers.Items != 0 || gc.Damaged.Items != 0 {
		a.t.Errorf("hone gc found %d leftover folders and %d damaged cache entries", gc.Leftovers.Items, gc.Damaged.Items)
	}
	for _, dir := range []string{os.TempDir(), "/tmp", "/dev/shm", "/var/tmp"} {
		if left, _ := filepath.Glob(filepath.Join(dir, "*"+a.tag+"*")); len(left) > 0 {
			a.t.Errorf("the attack left %v on the host", left)
		}
	}
	if n := testproc.Count(a.t, a.tag); n != 0 {
		a.t.Errorf("%d processes of the attack outlived the verdict", n)
	}
	if n := a.dialed.Load(); n != 0 {
		a.t.Errorf("%d connections reached the host's listeners", n)
	}
	if strings.Contains(raw, a.secret) {
		a.t.Errorf("the secret leaked into the verdict:\n%s", raw)
	}
}

// judge proposes files as one attack, judges it, and checks the host.
func (a *arena) judge(hypothesis string, files map[string]string) (*verdict.Entry, string) {
	a.t.Helper()
	before, ledger := a.snapshot(), a.ledgerEntries()
	id := a.propose(hypothesis, files)
	e, raw := a.verdict(id)
	a.unchanged(before, ledger, id, raw)
	return e, raw
}
