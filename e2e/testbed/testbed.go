// Package testbed is the workspace the end-to-end attack and gaming suites
// share: a repository with a C target built by make, gated by a self-test
// and a golden file, every secret and host resource an attack goes for, and
// the checks that the host is unchanged after a case. Each suite lives in a
// package of its own (e2e/attack, e2e/gaming, ...), within its own go test
// time limit, and drives the real hone binary.
package testbed

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// An arena is the workspace the attack suite shares: a repository with one
// C target built by make, gated by a self-test and a golden file, and all
// the secrets and host resources an attack goes for, each with the tag
// that lets the test find what an attack left behind.
type Arena struct {
	T      *testing.T
	UID    int    // who hone runs as: 0, or 65534 through setpriv
	Hone   string // the hone binary
	Repo   string
	Home   string // hone's HOME, with an SSH key in it
	Tmp    string // hone's TMPDIR and the test's scratch
	RO     string // a [sandbox] read_only folder with a root-only file and socket
	Tag    string // in every name and argv an attack makes
	Secret string // in hone's environment, the SSH key and the root-only file
	Port   int    // a TCP listener on the host's loopback
	Dialed atomic.Int64
	// SkipCache leaves the build cache out of snapshots, for a case that
	// makes hone rebuild it.
	SkipCache bool
	Dir       string // the fixtures folder the target comes from
}

//go:embed fixtures
var fixtures embed.FS

// File is a file of the arena's fixtures folder.
func (a *Arena) File(name string) string {
	a.T.Helper()
	return fixture(a.T, a.Dir, name)
}

func fixture(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := fixtures.ReadFile(path.Join("fixtures", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// RandomHex is n random bytes in hex, for tags and secrets.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// AttackFile is a file of the attack suite's target.
func AttackFile(t *testing.T, name string) string {
	t.Helper()
	return fixture(t, "attack", name)
}

// New makes the attack suite's workspace for hone running as uid (0
// or 65534), in one code layout a side: what its attacks go for (the
// host, the repository, hone's state, the network, answers kept between
// runs) does not depend on where the code lands (e2e/layout attacks the
// layouts), and with one layout every bench run of a side shares one
// build, which only helps an attack that keeps its answer beside the
// program.
func New(t *testing.T, uid int) *Arena {
	return Open(t, uid, "attack", func(a *Arena) map[string]string {
		return map[string]string{
			"hone.toml":                    OneLayout(t, strings.ReplaceAll(AttackFile(t, "hone.toml"), "@RODIR@", a.RO)),
			"targets/c/prog.c":             AttackFile(t, "prog.c"),
			"targets/c/Makefile":           AttackFile(t, "Makefile"),
			"targets/c/test.sh":            AttackFile(t, "test.sh"),
			"targets/c/testdata/golden.sh": AttackFile(t, "golden.sh"),
			"targets/c/testdata/expected":  a.expected(),
		}
	})
}

// OneLayout sets [bench] layouts = 1 in toml, a fixture's hone.toml that
// starts with its [bench] table: for suites whose subject is not the code
// layout, where each layout would be a build per side and a warm-up pair
// in every verdict that reaches the bench.
func OneLayout(t *testing.T, toml string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(toml, "[bench]\n")
	if !ok {
		t.Fatalf("the fixture's hone.toml no longer starts with [bench]:\n%s", toml)
	}
	return "[bench]\n# One layout: this suite's subject is not the code layout.\nlayouts = 1\n" + rest
}

// Open makes a shared workspace, whose files (path -> content) come
// from files, for hone running as uid (0 or 65534). Its folders are
// world-traversable so that the other uid can run.
func Open(t *testing.T, uid int, dir string, files func(a *Arena) map[string]string) *Arena {
	tier.Jail(t)
	for _, tool := range []string{"cc", "make", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	a := &Arena{T: t, UID: uid, Tag: "honeattack" + RandomHex(4), Secret: "hone-secret-" + RandomHex(8), Dir: dir}
	base, err := os.MkdirTemp("", "hone-arena-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	a.Repo, a.Home, a.Tmp, a.RO = filepath.Join(base, "repo"), filepath.Join(base, "home"), filepath.Join(base, "tmp"), filepath.Join(base, "ro")
	for _, d := range []string{a.Repo, a.Home, a.Tmp, a.RO} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a.Hone = e2e.Hone(t)
	a.secrets()
	a.listen()

	for name, content := range files(a) {
		p := filepath.Join(a.Repo, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if uid != 0 {
		for _, d := range []string{a.Repo, a.Home, a.Tmp} {
			if out, err := exec.Command("chown", "-R", strconv.Itoa(uid)+":"+strconv.Itoa(uid), d).CombinedOutput(); err != nil {
				t.Fatalf("chown: %v %s", err, out)
			}
		}
	}
	a.Git("init", "-q", "-b", "main")
	a.Git("add", "-A")
	a.Git("commit", "-q", "-m", "the pin")
	a.MustHone("init")
	// A file only hone's state holds, for attacks on the state folder.
	a.WriteAs(filepath.Join(a.Repo, ".git", "hone", "canary"), "canary\n")
	return a
}

// secrets places the secret where attacks look for it: an SSH key in
// hone's HOME, and a file only root may read in the read_only folder.
func (a *Arena) secrets() {
	ssh := filepath.Join(a.Home, ".ssh")
	os.Mkdir(ssh, 0o700)
	if err := os.WriteFile(filepath.Join(ssh, "id_ed25519"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"+a.Secret+"\n"), 0o600); err != nil {
		a.T.Fatal(err)
	}
	os.WriteFile(filepath.Join(a.Home, ".bashrc"), []byte("# the user's\n"), 0o644)
	if err := os.WriteFile(filepath.Join(a.RO, "secret"), []byte(a.Secret+"\n"), 0o600); err != nil {
		a.T.Fatal(err)
	}
	os.WriteFile(filepath.Join(a.RO, "toolchain.txt"), []byte("a toolchain file\n"), 0o644)
}

// listen opens what the network attacks try to reach: a TCP port on the
// host's loopback, a root-only Unix socket in the read_only folder, and an
// abstract Unix socket of the host's network namespace. Every connection
// that arrives is counted.
func (a *Arena) listen() {
	accept := func(l net.Listener) {
		a.T.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				a.Dialed.Add(1)
				c.Close()
			}
		}()
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.T.Fatal(err)
	}
	a.Port = tcp.Addr().(*net.TCPAddr).Port
	accept(tcp)
	sock, err := net.Listen("unix", filepath.Join(a.RO, "sock"))
	if err != nil {
		a.T.Fatal(err)
	}
	os.Chmod(filepath.Join(a.RO, "sock"), 0o600)
	accept(sock)
	abstract, err := net.Listen("unix", "@"+a.Tag)
	if err != nil {
		a.T.Fatal(err)
	}
	accept(abstract)
}

// expected is the pin's output, which the golden gate compares against.
func (a *Arena) expected() string {
	exe := filepath.Join(a.Tmp, "prog-expected")
	src := filepath.Join(a.Tmp, "prog.c")
	os.WriteFile(src, []byte(AttackFile(a.T, "prog.c")), 0o644)
	if out, err := exec.Command("cc", "-O2", "-o", exe, src).CombinedOutput(); err != nil {
		a.T.Fatalf("cc: %v %s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		a.T.Fatal(err)
	}
	os.Remove(exe)
	os.Remove(src)
	return string(out)
}

// For is the arena as subtest t sees it, for subtests that run side by
// side in one arena: every field but T is a's (Dialed counts apart).
func (a *Arena) For(t *testing.T) *Arena {
	return &Arena{T: t, UID: a.UID, Hone: a.Hone, Repo: a.Repo, Home: a.Home, Tmp: a.Tmp, RO: a.RO,
		Tag: a.Tag, Secret: a.Secret, Port: a.Port, SkipCache: a.SkipCache, Dir: a.Dir}
}

// Command runs name as the arena's user, in the repository.
func (a *Arena) Command(name string, args ...string) *exec.Cmd {
	if a.UID != 0 {
		args = append([]string{"--reuid=" + strconv.Itoa(a.UID), "--regid=" + strconv.Itoa(a.UID), "--clear-groups", "--", name}, args...)
		name = "setpriv"
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = a.Repo
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + a.Home, "TMPDIR=" + a.Tmp, "LANG=C", "NO_COLOR=1",
		"GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
		"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "HONE_ATTACK_SECRET=" + a.Secret,
	}
	// The measurement tier's hone measures with the real meter, which it
	// takes from its environment.
	if tier.Measuring() {
		cmd.Env = append(cmd.Env, tier.Env+"=measure")
	}
	return cmd
}

func (a *Arena) Git(args ...string) string {
	a.T.Helper()
	var stderr bytes.Buffer
	cmd := a.Command("git", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		a.T.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// RunHone runs hone with args and returns its stdout, stderr and exit code.
func (a *Arena) RunHone(args ...string) (string, string, int) {
	var stdout, stderr bytes.Buffer
	cmd := a.Command(a.Hone, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		a.T.Fatalf("hone %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), code
}

func (a *Arena) MustHone(args ...string) string {
	a.T.Helper()
	out, errOut, code := a.RunHone(args...)
	if code != 0 {
		a.T.Fatalf("hone %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// WriteAs writes a file the arena's user owns.
func (a *Arena) WriteAs(p, content string) {
	a.T.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		a.T.Fatal(err)
	}
	if a.UID != 0 {
		os.Chown(p, a.UID, a.UID)
	}
}

// Propose turns files (paths below targets/c, whole contents) into a
// Diff against the pin, proposes it, and puts the working tree back.
func (a *Arena) Propose(hypothesis string, files map[string]string) string {
	a.T.Helper()
	diff := a.Diff(files)
	return a.ProposeDiff(hypothesis, diff)
}

func (a *Arena) Diff(files map[string]string) string {
	a.T.Helper()
	for name, content := range files {
		p := filepath.Join(a.Repo, "targets", "c", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		a.WriteAs(p, content)
		a.Git("add", "-N", "--", filepath.Join("targets", "c", name))
	}
	d := a.Git("diff")
	a.Git("reset", "-q", "--hard")
	a.Git("clean", "-fdq", "--", "targets")
	return d + "\n"
}

func (a *Arena) ProposeDiff(hypothesis, diff string) string {
	a.T.Helper()
	file := filepath.Join(a.Tmp, "patch.diff")
	a.WriteAs(file, diff)
	out := a.MustHone("patch", "propose", "c", "--hotspot", "walk", "--class", "1", "--hypothesis", hypothesis, "--file", file, "--json")
	var p struct {
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.PatchID == "" {
		a.T.Fatalf("propose: %v\n%s", err, out)
	}
	return p.PatchID
}

// Verdict runs hone verdict on a patch and returns the entry and the raw
// JSON, which holds everything the entry says (output tails included).
func (a *Arena) Verdict(id string) (*verdict.Entry, string) {
	a.T.Helper()
	out := a.MustHone("verdict", id, "--json")
	var e verdict.Entry
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		a.T.Fatalf("verdict JSON: %v\n%s", err, out)
	}
	a.T.Logf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	return &e, out
}

// Snapshot is what of the host an attack might change: the repository's
// files and refs (hone's own ledger, notes and patch refs aside), its git
// configuration, hooks and attributes, hone's state folder (the ledger's
// index cache aside), and the user's HOME.
type Snapshot map[string]string

func (a *Arena) Snapshot() Snapshot {
	a.T.Helper()
	s := Snapshot{}
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
	hash(a.Repo, "repo/", func(rel string) bool { return rel == ".git" })
	git := filepath.Join(a.Repo, ".git")
	for _, f := range []string{"config", "hooks", "info", "HEAD", "packed-refs"} {
		hash(filepath.Join(git, f), ".git/"+f+"/", nil)
	}
	hash(filepath.Join(git, "hone"), ".git/hone/", func(rel string) bool {
		// The ledger's lookup index, its anchor, its cache of checked
		// signatures and the locks (verdicts/ and proposals/ hold one per
		// patch) change with every append; run folders must be gone, which
		// gc checks.
		return strings.HasPrefix(rel, "ledger.") || strings.HasPrefix(rel, ".ledger.") || rel == "signatures" || rel == "verdicts" || rel == "proposals" ||
			strings.HasSuffix(rel, ".lock") || rel == "runs" || rel == "apply" ||
			a.SkipCache && rel == "build-cache"
	})
	// hone runs go on the host (its version, for the fingerprint), and go
	// counts that in the user's telemetry: hone's own doing, not a jail's.
	// An ordinary user's hone takes its turn to measure through a lock in
	// its cache folder (the folder itself only names what is in it).
	hash(a.Home, "home/", func(rel string) bool {
		return rel == ".config" || rel == ".config/go" || rel == ".config/go/telemetry" || rel == ".cache/hone"
	})
	if fi, err := os.Lstat(filepath.Join(a.Home, ".cache")); err == nil && fi.IsDir() {
		delete(s, "home/.cache")
	}
	for _, line := range strings.Split(a.Git("for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		ref, obj, _ := strings.Cut(line, " ")
		if strings.HasPrefix(ref, "refs/hone/patches/") || ref == "refs/heads/hone/ledger" || ref == "refs/notes/hone" {
			continue
		}
		s["ref "+ref] = obj
	}
	return s
}

// LedgerEntries lists the ids of every ledger entry.
func (a *Arena) LedgerEntries() map[string]bool {
	a.T.Helper()
	var es []struct {
		ID      string `json:"id"`
		PatchID string `json:"patch_id"`
	}
	if err := json.Unmarshal([]byte(a.MustHone("ledger", "list", "--all", "--json")), &es); err != nil {
		a.T.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range es {
		out[e.ID+" "+e.PatchID] = true
	}
	return out
}

// Unchanged checks the host after a case: the Snapshot, a ledger that only
// gained the case's proposal and verdict and still verifies, a build cache
// whose every entry matches its manifest with no leftover run folder, no
// file of the case in the host's /tmp or /dev/shm, no process of the case
// alive, no connection received, and the secret nowhere in the verdict.
func (a *Arena) Unchanged(before Snapshot, ledger map[string]bool, patch, raw string) {
	a.T.Helper()
	after := a.Snapshot()
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
		a.T.Errorf("the host changed:\n%s", strings.Join(diffs, "\n"))
	}
	for e := range a.LedgerEntries() {
		if !ledger[e] && !strings.HasSuffix(e, " "+patch) {
			a.T.Errorf("a ledger entry appeared that is not this patch's: %s", e)
		}
	}
	a.MustHone("ledger", "verify")
	var gc struct {
		Leftovers struct{ Items int } `json:"leftovers"`
		Damaged   struct{ Items int } `json:"damaged"`
	}
	if err := json.Unmarshal([]byte(a.MustHone("gc", "--json")), &gc); err != nil {
		a.T.Fatal(err)
	}
	if gc.Leftovers.Items != 0 || gc.Damaged.Items != 0 {
		a.T.Errorf("hone gc found %d leftover folders and %d damaged cache entries", gc.Leftovers.Items, gc.Damaged.Items)
	}
	for _, dir := range []string{os.TempDir(), "/tmp", "/dev/shm", "/var/tmp"} {
		if left, _ := filepath.Glob(filepath.Join(dir, "*"+a.Tag+"*")); len(left) > 0 {
			a.T.Errorf("the attack left %v on the host", left)
		}
	}
	if n := testproc.Count(a.T, a.Tag); n != 0 {
		a.T.Errorf("%d processes of the attack outlived the verdict", n)
	}
	if n := a.Dialed.Load(); n != 0 {
		a.T.Errorf("%d connections reached the host's listeners", n)
	}
	if strings.Contains(raw, a.Secret) {
		a.T.Errorf("the secret leaked into the verdict:\n%s", raw)
	}
}

// Judge proposes files as one attack, judges it, and checks the host.
func (a *Arena) Judge(hypothesis string, files map[string]string) (*verdict.Entry, string) {
	a.T.Helper()
	before, ledger := a.Snapshot(), a.LedgerEntries()
	id := a.Propose(hypothesis, files)
	e, raw := a.Verdict(id)
	a.Unchanged(before, ledger, id, raw)
	return e, raw
}

// Fill replaces the arena's placeholders in an attack's text.
func (a *Arena) Fill(s string) string {
	return strings.NewReplacer("{repo}", a.Repo, "{home}", a.Home, "{tag}", a.Tag, "{ro}", a.RO,
		"{port}", strconv.Itoa(a.Port)).Replace(s)
}

// Gate replaces the unit gate with script; the attack toolbox is built too.
func (a *Arena) Gate(script string) map[string]string {
	return map[string]string{
		"test.sh":  "#!/bin/sh\n" + a.Fill(script) + "\n",
		"attack.c": AttackFile(a.T, "attack.c"),
		"Makefile": "$(OUT)/prog: prog.c attack.c\n\tcc -O2 -o $(OUT)/prog prog.c\n\tcc -O2 -o $(OUT)/attack attack.c\n",
	}
}

// Hold makes the unit gate of files (a patch's, from Prog) wait while a
// file of the read_only folder is there, and returns what removes it: a
// verdict of the patch then stays started and undecided, past its build,
// however quick the machine, until the test has done what it needs there
// (signal the verdict, kill it).
func (a *Arena) Hold(files map[string]string) (release func()) {
	a.T.Helper()
	hold := filepath.Join(a.RO, "hold-"+a.Tag)
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		a.T.Fatal(err)
	}
	files["test.sh"] = "#!/bin/sh\nwhile [ -e " + hold + " ]; do sleep 0.1; done\nexec \"$HONE_OUT/prog\" --selftest\n"
	return func() { os.Remove(hold) }
}

// Build adds recipe lines to the build.
func (a *Arena) Build(lines ...string) map[string]string {
	recipe := "$(OUT)/prog: prog.c\n\tcc -O2 -o $(OUT)/prog prog.c\n"
	for _, l := range lines {
		recipe += "\t" + a.Fill(l) + "\n"
	}
	return map[string]string{"Makefile": recipe}
}

// Prog edits the program the gates and the bench run: each pair replaces
// the first occurrence of a text, in order.
func (a *Arena) Prog(pairs ...string) map[string]string {
	src := a.File("prog.c")
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			a.T.Fatalf("prog.c has no %q", pairs[i])
		}
		src = strings.Replace(src, pairs[i], a.Fill(pairs[i+1]), 1)
	}
	return map[string]string{"prog.c": src}
}

// Remember is a program that keeps its answer in dir (a C expression) and
// answers from it at once when it is there: from the second run on it
// would do (and declare) no walk, if anything survived between runs.
func (a *Arena) Remember(dir string) map[string]string {
	return a.Prog(
		"\tprintf(\"%llu\\n\", r);", "\tprintf(\"%llu\\n\", r);\n\tif ((f = fopen(path, \"w\"))) { fprintf(f, \"%llu\\n\", r); fclose(f); }",
		"#include <string.h>", "#include <string.h>\n#include <stdlib.h>",
		"\tunsigned long long r = 0;", `	char path[4096];
	snprintf(path, sizeof path, "%s/answer-{tag}", `+dir+`);
	FILE *f = fopen(path, "r");
	unsigned long long r = 0;
	if (f && fscanf(f, "%llu", &r) == 1) {
		printf("%llu\n", r);
		return 0;
	}`)
}

func WantVerdict(t *testing.T, e *verdict.Entry, words ...string) {
	t.Helper()
	for _, w := range words {
		if e.Verdict == w {
			return
		}
	}
	t.Errorf("verdict %s (%s), want one of %v: %s", e.Verdict, e.Reason, words, e.Detail)
}

func (a *Arena) WantOutput(t *testing.T, e *verdict.Entry, wants ...string) {
	t.Helper()
	var tails []string
	for _, g := range e.Gates {
		for _, r := range []*verdict.RunInfo{g.Candidate, g.Baseline} {
			if r != nil {
				tails = append(tails, r.OutputTail)
			}
		}
	}
	all := strings.Join(tails, "\n")
	for _, w := range wants {
		if w = a.Fill(w); !strings.Contains(all, w) {
			t.Errorf("the attack's output lacks %q:\n%s", w, all)
		}
	}
}

// JudgeRemembered judges a program that keeps its answer between bench runs
// in dir (a C expression), named name. If anything survived from one run
// to the next, a later run would answer without its walk: a remembered
// answer of another seed fails the bench's output check, one of the same
// seed declares less work and is measured faster. Kept from every run, it
// does the pin's work in each, which the test meter shows pair by pair.
func (a *Arena) JudgeRemembered(t *testing.T, name, dir string) {
	t.Helper()
	e, _ := a.Judge(name, a.Remember(dir))
	WantVerdict(t, e, ledger.VerdictRejectedBench)
	EveryRunDidTheWork(t, e)
}

// EveryRunDidTheWork checks, in an entry the test builds' work meter made,
// that no candidate bench run declared less work than its pair's baseline
// run: no run found a shortcut, whatever the verdict's statistics say.
func EveryRunDidTheWork(t *testing.T, e *verdict.Entry) {
	t.Helper()
	if !e.HasFlag(ledger.FlagTestMeter) || e.Bench == nil {
		t.Fatalf("no bench measured by declared work (flags %q): the check reads the work each run declared", e.Flags)
	}
	for _, s := range e.Bench.Samples {
		if s.Metric != e.Bench.Metric {
			continue
		}
		for i := range min(len(s.Baseline), len(s.Candidate)) {
			if s.Candidate[i] < s.Baseline[i] {
				t.Errorf("pair %d: the candidate run declared less work than the baseline's (%g < %g %s): it skipped its walk", i, s.Candidate[i], s.Baseline[i], s.Unit)
			}
		}
		return
	}
	t.Errorf("no samples of %s", e.Bench.Metric)
}
