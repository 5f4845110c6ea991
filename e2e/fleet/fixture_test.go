// Package fleet runs the runner fleet end to end: the real hone binary, a
// bare remote whose pre-receive runs hone, agent clones proposing and
// runner clones with keys of their own judging, all on this machine.
package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/verdict"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// fixture is one fleet: a server with the hook, a seed commit whose
// hone.toml trusts the runners' keys, and a home for every clone.
type fixture struct {
	t      *testing.T
	dir    string
	hone   string
	server string
	env    []string
	keys   []string // runner i's signing key
	// ident is the git identity a clone's commands commit as, by clone
	// directory (default: everyone is t@hone.invalid).
	ident map[string][]string
}

// The target: a C program whose output the gate pins. Every patch keeps
// that output, so judging it runs the whole protocol.
const prog = "#include <stdio.h>\nint main(void) { puts(\"1\"); return 0; }\n"

const honeToml = `[ledger]
allowed_signers = ".hone/allowed_signers"

[bench]
pairs = 2
max_pairs = 2
# one code layout: these verdicts prove what the fleet decides (claims,
# queues, signatures), not a measurement, and each layout is a build per
# side (as e2e/remote's and e2e/deploy's)
layouts = 1

[targets.c]
build = "cc -O1 -o $HONE_OUT/prog prog.c"

  [[targets.c.gates]]
  name = "golden"
  run = "$HONE_OUT/prog"
  equivalence = true

  [targets.c.bench]
  run = "$HONE_OUT/prog"
`

func newFixture(t *testing.T, runners int) *fixture {
	t.Helper()
	return newFixtureWith(t, runners, honeToml)
}

// newFixtureWith is newFixture with toml as the seed's hone.toml.
func newFixtureWith(t *testing.T, runners int, toml string) *fixture {
	t.Helper()
	for _, tool := range []string{"ssh-keygen", "cc", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	dir := t.TempDir()
	f := &fixture{t: t, dir: dir, hone: e2e.Hone(t), server: filepath.Join(dir, "server.git")}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	f.env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@hone.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@hone.invalid", "NO_COLOR=1",
		// A fleet is its own machine: its runners take turns to measure
		// among themselves, not behind every other package's benches.
		// Nothing here asserts what a verdict measured (see honeToml),
		// and a turn over the whole machine put this package's tiny
		// benches behind minutes of Go-harness benches, which made it
		// the suite's longest package.
		verdict.BenchLockEnv+"="+filepath.Join(dir, "bench.lock"))
	var signers strings.Builder
	for i := range runners {
		key := filepath.Join(dir, fmt.Sprintf("runner%d.key", i))
		f.must(dir, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runner", "-f", key)
		pub, err := os.ReadFile(key + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&signers, "runner%d@fleet %s", i, pub)
		f.keys = append(f.keys, key)
	}
	seed := filepath.Join(dir, "seed")
	f.must(dir, "git", "init", "-q", "--bare", "-b", "main", f.server)
	f.must(dir, "git", "init", "-q", "-b", "main", seed)
	f.write(seed, "hone.toml", toml)
	f.write(seed, "targets/c/prog.c", prog)
	f.write(seed, ".hone/allowed_signers", signers.String())
	f.must(seed, "git", "add", "-A")
	f.must(seed, "git", "commit", "-q", "-m", "pin")
	f.must(seed, "git", "push", "-q", f.server, "main")
	f.write(f.server, "hooks/pre-receive", "#!/bin/sh\nexec "+f.hone+" guard pre-receive\n")
	if err := os.Chmod(filepath.Join(f.server, "hooks", "pre-receive"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) write(dir, name, body string) {
	f.t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// run runs a command in dir and returns stdout, stderr and exit status.
func (f *fixture) run(dir string, args ...string) (string, string, int) {
	f.t.Helper()
	cmd := f.command(dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), stderr.String(), ee.ExitCode()
	} else if err != nil {
		f.t.Fatalf("%v: %v", args, err)
	}
	return stdout.String(), stderr.String(), 0
}

func (f *fixture) command(dir string, args ...string) *exec.Cmd {
	if args[0] == "hone" {
		args[0] = f.hone
	}
	cmd := exec.Command(args[0], args[1:]...)
	// A copy: appending to f.env itself would write the identity into
	// its spare capacity, which every command shares, and two agents
	// proposing at once would commit as each other.
	cmd.Dir, cmd.Env = dir, append(slices.Clip(f.env), f.ident[dir]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func (f *fixture) must(dir string, args ...string) string {
	f.t.Helper()
	out, errOut, code := f.run(dir, args...)
	if code != 0 {
		f.t.Fatalf("%v exited %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// clone makes a clone of the server; key, when set, is its signing key.
func (f *fixture) clone(name, key string) string {
	f.t.Helper()
	dir := filepath.Join(f.dir, name)
	// Over git's protocol, as from a real remote: a local clone copies the
	// server's object directory file by file, and failed when a push that
	// ran meanwhile moved its quarantine away ("failed to copy file to
	// .../tmp_objdir-incoming-...": No such file or directory).
	f.must(f.dir, "git", "clone", "-q", "--no-local", f.server, dir)
	if key != "" {
		f.must(dir, "git", "config", "hone.signingkey", key)
	}
	return dir
}

// agent makes a clone without a key whose commits are by name: the
// proposer the queue's round robin knows it as.
func (f *fixture) agent(name string) string {
	f.t.Helper()
	dir := f.clone(name, "")
	if f.ident == nil {
		f.ident = map[string][]string{}
	}
	f.ident[dir] = []string{"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + name + "@hone.invalid"}
	return dir
}

// patch is a diff of prog.c that keeps its output: body replaces main.
func patch(body string) string {
	return "diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1,2 +1,2 @@\n #include <stdio.h>\n-int main(void) { puts(\"1\"); return 0; }\n+" + body + "\n"
}

// propose proposes diff in clone dir and returns the patch id.
func (f *fixture) propose(dir, hypothesis, diff string) string {
	f.t.Helper()
	// A file of its own per proposal: an agent may propose from many
	// processes at once.
	tmp, err := os.CreateTemp(filepath.Join(dir, ".git"), "p-*.diff")
	if err != nil {
		f.t.Fatal(err)
	}
	file := tmp.Name()
	_, err = tmp.WriteString(diff)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.TrimSpace(f.must(dir, "hone", "patch", "propose", "c", "--hotspot", "main", "--class", "1", "--hypothesis", hypothesis, "--file", file))
}

// honestPatch is a patch that keeps the output and the work: judged, it is
// no change.
var honestPatch = patch(`int main(void) { fputs("1\n", stdout); return 0; }`)

// publish proposes diff in clone dir and pushes the proposal to the
// server, returning the patch id.
func (f *fixture) publish(dir, hypothesis, diff string) string {
	f.t.Helper()
	id := f.propose(dir, hypothesis, diff)
	f.must(dir, "hone", "ledger", "push")
	return id
}

// serverRefs lists the server's refs under prefix.
func (f *fixture) serverRefs(prefix string) []string {
	f.t.Helper()
	out := f.must(f.server, "git", "for-each-ref", "--format=%(refname)", prefix)
	return strings.Fields(out)
}

type listed struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	PatchID string `json:"patch_id"`
	Verdict string `json:"verdict"`
	Signer  string `json:"signer"`
	Trusted *bool  `json:"trusted"`
	Class   string `json:"runner_class"`
}

// entries pulls into clone dir and lists its entries of kind.
func (f *fixture) entries(dir, kind string) []listed {
	f.t.Helper()
	f.must(dir, "hone", "ledger", "pull")
	var out []listed
	if err := json.Unmarshal([]byte(f.must(dir, "hone", "ledger", "list", "--kind", kind, "--json")), &out); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// runner is a `hone runner` started in the background.
type runner struct {
	cmd    *exec.Cmd
	stderr *testproc.Buffer
	done   chan struct{} // closed once it exited, err then set
	err    error
}

func (f *fixture) startRunner(dir string, args ...string) *runner {
	f.t.Helper()
	cmd := f.command(dir, append([]string{"hone", "runner"}, args...)...)
	r := &runner{cmd: cmd, stderr: &testproc.Buffer{}, done: make(chan struct{})}
	cmd.Stderr, cmd.Stdout = r.stderr, r.stderr
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	f.t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	})
	return r
}

// waitFor waits until the runner's output has s, or fails after d.
func (r *runner) waitFor(t *testing.T, s string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(r.stderr.String(), s) {
			return
		}
	}
	t.Fatalf("runner never printed %q:\n%s", s, r.stderr.String())
}

// wait waits for the runner to exit by itself.
func (r *runner) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-r.done:
		if r.err != nil {
			t.Fatalf("runner: %v\n%s", r.err, r.stderr.String())
		}
	case <-time.After(d):
		t.Fatalf("runner still running after %s:\n%s", d, r.stderr.String())
	}
}
