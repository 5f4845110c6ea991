// Package remote plays issue 27's attacks on the remote: agents without the
// runner's key push to a bare server whose pre-receive runs hone, and a
// runner judges what is pending and pushes its signed verdicts. Each test
// performs one attack with real pushes and checks that the server refuses
// it, or that it cannot change what the runner judges, and that the
// runner loop keeps judging and pushing afterwards.
package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// world is one deployment: a bare server with hone's pre-receive hook, the
// keys of a maintainer, a runner and two agents, and clones.
type world struct {
	t      tb
	dir    string
	hone   string
	server string
	keys   map[string]string // name -> private key file
	// pusher is whom the server authenticated, as a forge tells its hook
	// (HONE_PUSHER, which [guard] pusher names where a test sets it; the
	// local transport runs the hook with the pushing command's
	// environment); "" for none.
	pusher string
	// tail is appended to hone.toml by seed: tables of a test's own.
	tail string
}

const honeToml = `[ledger]
allowed_signers = ".hone/allowed_signers"

[guard]
maintainers = ".hone/maintainers"
max_queued = %d

[bench]
pairs = 2
max_pairs = 2
# one code layout: these verdicts prove what the server and the runner
# decide, not a measurement, and each layout is a build per side
layouts = 1

[targets.c]
pin = "%s"
protect = ["testdata/**"]
build = "cc -o $HONE_OUT/prog prog.c"

  [[targets.c.gates]]
  name = "golden"
  run = "$HONE_OUT/prog"
  equivalence = true

  [targets.c.bench]
  run = "$HONE_OUT/prog"
`

const progC = "#include <stdio.h>\n#include <unistd.h>\nint main(void) { puts(\"1\"); return 0; }\n"

// newWorld seeds the server's main with hone.toml pinning target c to pin
// (tagged v1 too) and installs the hook with `hone hooks install --server`.
func newWorld(t *testing.T, pin string, maxQueued int) *world {
	t.Helper()
	return newWorldWith(t, pin, maxQueued, "")
}

// tb is what a world needs of its test: a *testing.T, or a *rapid.T for
// the property test's worlds.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// newWorldWith is newWorld with guard's lines added to [guard].
func newWorldWith(t *testing.T, pin string, maxQueued int, guard string) *world {
	t.Helper()
	w := newKeys(t)
	w.seed(pin, maxQueued, guard)
	return w
}

// newKeys is a world without a server yet: the hone binary and the keys.
func newKeys(t *testing.T) *world {
	t.Helper()
	for _, tool := range []string{"cc", "ssh-keygen", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	w := &world{t: t, dir: t.TempDir(), hone: e2e.Hone(t), keys: map[string]string{}}
	for _, name := range []string{"maintainer", "runner", "agent", "honest"} {
		k := filepath.Join(w.dir, "keys", name)
		if err := os.MkdirAll(filepath.Dir(k), 0o700); err != nil {
			t.Fatal(err)
		}
		w.must(w.dir, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", k)
		w.keys[name] = k
	}
	return w
}

// seed makes the world's server: a bare repository whose main holds
// hone.toml (guard's lines added to [guard]) pinning target c to pin
// (tagged v1 too), with hone's pre-receive installed by `hone hooks
// install --server`.
func (w *world) seed(pin string, maxQueued int, guard string) {
	t := w.t
	t.Helper()
	w.server = filepath.Join(w.dir, "server.git")
	seed := filepath.Join(w.dir, "seed")
	w.must(w.dir, "git", "init", "-q", "--bare", "-b", "main", w.server)
	w.must(w.dir, "git", "init", "-q", "-b", "main", seed)
	w.write(seed, map[string]string{
		"hone.toml":               strings.Replace(fmt.Sprintf(honeToml, maxQueued, pin), "[guard]\n", "[guard]\n"+guard, 1) + w.tail,
		".hone/allowed_signers":   "runner@ci " + w.pub("runner"),
		".hone/maintainers":       "maintainer@example " + w.pub("maintainer"),
		"targets/c/prog.c":        progC,
		"targets/c/testdata/want": "1\n",
	})
	w.must(seed, "git", "add", "-A")
	w.must(seed, "git", "commit", "-q", "-m", "pin")
	w.must(seed, "git", "tag", "v1")
	w.must(seed, "git", "push", "-q", w.server, "main", "v1")
	out := w.must(w.server, w.hone, "hooks", "install", "--server")
	if !strings.Contains(out, "refs/heads/main") {
		t.Fatalf("hooks install --server does not say who guards main:\n%s", out)
	}
}

func (w *world) pub(name string) string {
	b, err := os.ReadFile(w.keys[name] + ".pub")
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

func (w *world) write(dir string, files map[string]string) {
	w.t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
}

// run runs a command in dir with hone on PATH and a home of the world's
// own, returning stdout, stderr and the exit status.
func (w *world) run(dir string, args ...string) (string, string, int) {
	w.t.Helper()
	name := args[0]
	if name == "hone" {
		name = w.hone
	}
	cmd := exec.Command(name, args[1:]...)
	cmd.Dir = dir
	cmd.Env = w.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// env is the environment the world's commands run in: hone on PATH, a
// home of the world's own, and the pusher the server authenticates.
func (w *world) env() []string {
	home := filepath.Join(w.dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		w.t.Fatal(err)
	}
	env := []string{"PATH=" + filepath.Dir(w.hone) + ":" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + os.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C", "NO_COLOR=1",
		"GIT_AUTHOR_NAME=someone", "GIT_AUTHOR_EMAIL=someone@example", "GIT_COMMITTER_NAME=someone", "GIT_COMMITTER_EMAIL=someone@example"}
	if w.pusher != "" {
		env = append(env, "HONE_PUSHER="+w.pusher)
	}
	return env
}

func (w *world) must(dir string, args ...string) string {
	w.t.Helper()
	out, errOut, code := w.run(dir, args...)
	if code != 0 {
		w.t.Fatalf("%v exited %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// refused runs a push that the server must refuse, with want in what
// its hook printed.
func (w *world) refused(dir, want string, args ...string) {
	w.t.Helper()
	out, errOut, code := w.run(dir, args...)
	if code == 0 || !strings.Contains(errOut, want) {
		w.t.Fatalf("%v: exit %d, want a refusal saying %q\n%s%s", args, code, want, out, errOut)
	}
}

// clone is a clone of the server signing its ledger commits with key and
// committing as name.
func (w *world) clone(name, key string) string {
	w.t.Helper()
	dir := filepath.Join(w.dir, name)
	w.must(w.dir, "git", "clone", "-q", "--no-local", w.server, dir)
	w.must(dir, "git", "config", "user.name", name)
	w.must(dir, "git", "config", "user.email", name+"@example")
	if key != "" {
		w.must(dir, "git", "config", "hone.signingkey", w.keys[key])
	}
	w.must(dir, "hone", "ledger", "pull")
	return dir
}

// propose proposes, in clone dir, the patch that makes prog.c run body
// instead of printing 1, and returns its id.
func (w *world) propose(dir, body, hypothesis string) string {
	w.t.Helper()
	diff := "diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1,3 +1,3 @@\n #include <stdio.h>\n #include <unistd.h>\n-int main(void) { puts(\"1\"); return 0; }\n+int main(void) { " + body + " return 0; }\n"
	f := filepath.Join(w.dir, fmt.Sprintf("p%d.diff", len(body)+len(hypothesis)))
	if err := os.WriteFile(f, []byte(diff), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return strings.TrimSpace(w.must(dir, "hone", "patch", "propose", "c", "--hotspot", "main", "--class", "1", "--hypothesis", hypothesis, "--file", f))
}

// pushedProposal is an agent's clone that proposed the patch printing two
// and pushed it, and the patch's id.
func (w *world) pushedProposal() (agent, id string) {
	w.t.Helper()
	agent = w.clone("agent", "agent")
	id = w.propose(agent, `puts("2");`, "print two")
	w.must(agent, "hone", "ledger", "push")
	return agent, id
}

type judgement struct {
	PatchID string `json:"patch_id"`
	Entry   *struct {
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	} `json:"entry"`
	Error   string `json:"error"`
	Skipped bool   `json:"skipped"`
}

// runnerLoop is one turn of the README's runner loop in the runner's
// clone: pull, judge what is pending, push. Each step must exit 0.
func (w *world) runnerLoop(runner string) []judgement {
	w.t.Helper()
	w.must(runner, "hone", "ledger", "pull")
	var js []judgement
	if err := json.Unmarshal([]byte(w.must(runner, "hone", "verdict", "--pending", "--json")), &js); err != nil {
		w.t.Fatal(err)
	}
	w.must(runner, "hone", "ledger", "push")
	return js
}

// verdicts counts each verdict word of the runner's judgements.
func verdicts(js []judgement) map[string]int {
	out := map[string]int{}
	for _, j := range js {
		switch {
		case j.Entry != nil:
			out[j.Entry.Verdict]++
		case j.Skipped:
			out["skipped"]++
		}
	}
	return out
}

// serverRefs lists the server's refs and what they point at.
func (w *world) serverRefs() string {
	return w.must(w.server, "git", "for-each-ref", "--format=%(refname) %(objectname)")
}

// plant commits files onto the ledger branch of clone dir by plain git, as
// an agent can, on top of parent (the clone's ledger tip when empty), and
// returns the new commit.
func (w *world) plant(dir, parent string, files map[string]string) string {
	w.t.Helper()
	if parent == "" {
		parent = strings.TrimSpace(w.must(dir, "git", "rev-parse", "refs/heads/hone/ledger"))
	}
	idx := filepath.Join(w.dir, "plant-index")
	os.Remove(idx)
	env := func(args ...string) []string { return append([]string{"env", "GIT_INDEX_FILE=" + idx}, args...) }
	w.must(dir, env("git", "read-tree", parent)...)
	for p, body := range files {
		f := filepath.Join(w.dir, "plant-blob")
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			w.t.Fatal(err)
		}
		blob := strings.TrimSpace(w.must(dir, "git", "hash-object", "-w", f))
		w.must(dir, env("git", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)...)
	}
	tree := strings.TrimSpace(w.must(dir, env("git", "write-tree")...))
	commit := strings.TrimSpace(w.must(dir, "git", "commit-tree", tree, "-p", parent, "-m", "planted"))
	w.must(dir, "git", "update-ref", "refs/heads/hone/ledger", commit)
	return commit
}

// entry returns the ledger file of the proposal of patch id in clone dir:
// its path and content.
func (w *world) entry(dir, kind, patchID string) (string, string) {
	w.t.Helper()
	for _, p := range strings.Fields(w.must(dir, "git", "ls-tree", "-r", "--name-only", "refs/heads/hone/ledger")) {
		if !strings.Contains(p, "/"+kind+"/") {
			continue
		}
		body := w.must(dir, "git", "show", "refs/heads/hone/ledger:"+p)
		if strings.Contains(body, `patch_id = "`+patchID+`"`) {
			return p, body
		}
	}
	w.t.Fatalf("no %s of patch %s", kind, patchID)
	return "", ""
}

var idLine = regexp.MustCompile(`(?m)^id = "[0-9a-f]{32}"$`)

// rewrite gives a copy of entry body a new id (n makes it unique; its
// time is 2001, earlier than anything real) and the replacements given,
// and returns the path it belongs at and the new body.
func rewrite(body string, n int, replace ...string) (string, string) {
	id := fmt.Sprintf("00e8d4a51000%020x", n)
	body = idLine.ReplaceAllString(body, `id = "`+id+`"`)
	body = regexp.MustCompile(`(?m)^created = .*$`).ReplaceAllString(body, "created = 2001-09-09T01:46:40Z")
	for i := 0; i+1 < len(replace); i += 2 {
		body = strings.Replace(body, replace[i], replace[i+1], 1)
	}
	kind := regexp.MustCompile(`(?m)^kind = "([a-z]+)"$`).FindStringSubmatch(body)[1]
	return "c/" + kind + "/" + id[30:] + "/" + id + ".toml", body
}
