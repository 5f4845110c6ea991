package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
)

// account is one unprivileged user of the deployment test, played by root
// through setpriv.
type account struct {
	t        *testing.T
	name     string
	uid, gid int
	home     string
	bin      string // the directory holding the hone under test
}

// run runs a command as the account in dir and returns its stdout, stderr
// and exit status.
func (a *account) run(dir string, args ...string) (string, string, int) {
	a.t.Helper()
	cmd := exec.Command("setpriv", append([]string{fmt.Sprintf("--reuid=%d", a.uid), fmt.Sprintf("--regid=%d", a.gid), "--clear-groups", "--"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + a.bin + ":" + os.Getenv("PATH"), "HOME=" + a.home, "TMPDIR=" + filepath.Join(a.home, "tmp"),
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		a.t.Fatalf("%s: %v: %v", a.name, args, err)
	}
	return stdout.String(), stderr.String(), code
}

// must runs a command that has to succeed.
func (a *account) must(dir string, args ...string) string {
	a.t.Helper()
	out, errOut, code := a.run(dir, args...)
	if code != 0 {
		a.t.Fatalf("%s: %v exited %d\n%s%s", a.name, args, code, out, errOut)
	}
	return out
}

// newAccount plays name with the first of the system's unprivileged users
// that exists (ssh-keygen needs a passwd entry), with a home of its own
// under base; no user is created.
func newAccount(t *testing.T, base, name string, candidates []string, bin string) *account {
	t.Helper()
	var u *user.User
	for _, c := range candidates {
		if found, err := user.Lookup(c); err == nil && found.Uid != "0" {
			u = found
			break
		}
	}
	if u == nil {
		t.Skipf("no unprivileged user among %v to play the %s", candidates, name)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	home := filepath.Join(base, "home-"+name)
	for _, d := range []string{home, filepath.Join(home, "tmp"), filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("[user]\n\tname = %s\n\temail = %s@hone.invalid\n[safe]\n\tdirectory = *\n", name, name)
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, gid), home).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	return &account{t: t, name: name, uid: uid, gid: gid, home: home, bin: bin}
}

type listedVerdict struct {
	ID      string `json:"id"`
	PatchID string `json:"patch_id"`
	Signer  string `json:"signer"`
	Trusted *bool  `json:"trusted"`
	AddedBy string `json:"added_by"`
}

// The deployment of issue 14, played with two accounts on one machine: an
// agent account proposes and pushes; a runner account, whose signing key
// only it can read, judges what is pending, signs and pushes. The agent
// cannot make a verdict count: its own verdict (signed with its own key),
// and one it writes with plain git, show as untrusted to it and are refused
// by the server's pre-receive hook, while the runner's are trusted in both
// clones and verified by plain git.
func TestAnAgentCannotForgeTheRunnersVerdict(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to play two accounts")
	}
	for _, tool := range []string{"setpriv", "ssh-keygen", "cc", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	base, err := os.MkdirTemp("", "hone-deploy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Dir(e2e.Hone(t))
	agent := newAccount(t, base, "agent", []string{"nobody"}, bin)
	runner := newAccount(t, base, "runner", []string{"games", "list", "news", "uucp", "irc"}, bin)
	runnerKey := filepath.Join(runner.home, ".ssh", "signing")
	runner.must(runner.home, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runner", "-f", runnerKey)
	agentKey := filepath.Join(agent.home, ".ssh", "signing")
	agent.must(agent.home, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "agent", "-f", agentKey)
	pub, err := os.ReadFile(runnerKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, code := agent.run(agent.home, "cat", runnerKey); code == 0 {
		t.Fatal("the agent can read the runner's signing key")
	}

	// The server: a shared bare repository whose pre-receive runs hone, and
	// main with hone.toml trusting the runner's key.
	server := filepath.Join(base, "server.git")
	seed := filepath.Join(base, "seed")
	for _, args := range [][]string{{"init", "-q", "--bare", "--shared=0777", "-b", "main", server}, {"init", "-q", "-b", "main", seed}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	files := map[string]string{
		"hone.toml":             deployToml,
		"targets/c/prog.c":      "#include <stdio.h>\nint main(void) { puts(\"1\"); return 0; }\n",
		".hone/allowed_signers": "runner@ci " + string(pub),
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(seed, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(seed, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=admin", "-c", "user.email=admin@hone.invalid", "commit", "-q", "-m", "pin"}, {"push", "-q", server, "main"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = seed
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	hook := "#!/bin/sh\nexec " + filepath.Join(bin, "hone") + " guard pre-receive\n"
	if err := os.WriteFile(filepath.Join(server, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chmod", "-R", "a+rwX", server).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}

	// The agent proposes two patches and shares them.
	agentRepo := filepath.Join(agent.home, "repo")
	agent.must(agent.home, "git", "clone", "-q", server, agentRepo)
	agent.must(agentRepo, "git", "config", "hone.signingkey", agentKey)
	var patches []string
	for _, n := range []string{"2", "3"} {
		diff := filepath.Join(agent.home, "p"+n+".diff")
		body := "diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1,2 +1,2 @@\n #include <stdio.h>\n-int main(void) { puts(\"1\"); return 0; }\n+int main(void) { puts(\"" + n + "\"); return 0; }\n"
		agent.must(agent.home, "sh", "-c", "cat > "+diff+" <<'EOF'\n"+body+"EOF\n")
		id := agent.must(agentRepo, "hone", "patch", "propose", "c", "--hotspot", "main", "--class", "1", "--hypothesis", "print "+n, "--file", diff)
		patches = append(patches, strings.TrimSpace(id))
	}
	agent.must(agentRepo, "hone", "ledger", "push")

	// The agent judges its own patch, signing with its own key: untrusted
	// to itself, refused by the server.
	agent.must(agentRepo, "hone", "verdict", patches[0])
	if vs := verdictsOf(t, agent, agentRepo); len(vs) != 1 || vs[0].Signer != "untrusted" || *vs[0].Trusted {
		t.Fatalf("the agent's own verdict as the agent sees it: %+v", vs)
	}
	_, errOut, code := agent.run(agentRepo, "hone", "ledger", "push")
	if code != 3 || !strings.Contains(errOut, "signed by SHA256:") || !strings.Contains(errOut, "only verdicts signed by a key") {
		t.Fatalf("pushing the agent's own verdict: exit %d\n%s", code, errOut)
	}
	// A verdict written with plain git and pushed with plain git.
	forged := filepath.Join(agent.home, "forge")
	agent.must(agent.home, "git", "clone", "-q", server, forged)
	agent.must(forged, "git", "fetch", "-q", "origin", "hone/ledger:hone/ledger")
	agent.must(forged, "sh", "-c", `export GIT_INDEX_FILE=$HOME/idx; git read-tree hone/ledger &&
b=$(printf 'schema = 1\nid = "019b0000000000000000000000000001"\nkind = "verdict"\ntarget = "c"\ncreated = 2026-01-01T00:00:00Z\npatch_id = "`+patches[1]+`"\ncommit = "0000000000000000000000000000000000000001"\nverdict = "accepted"\nsummary = "10x"\n' | git hash-object -w --stdin) &&
git update-index --add --cacheinfo 100644,$b,c/verdict/01/019b0000000000000000000000000001.toml &&
git update-ref refs/heads/hone/ledger $(git commit-tree $(git write-tree) -p hone/ledger -m verdict)`)
	_, errOut, code = agent.run(forged, "git", "push", "origin", "hone/ledger")
	if code == 0 || !strings.Contains(errOut, "which is not signed") {
		t.Fatalf("pushing a hand-written verdict: exit %d\n%s", code, errOut)
	}

	// The runner judges everything pending, signs with the key only it can
	// read, and pushes.
	runnerRepo := filepath.Join(runner.home, "repo")
	runner.must(runner.home, "git", "clone", "-q", server, runnerRepo)
	runner.must(runnerRepo, "git", "config", "hone.signingkey", runnerKey)
	runner.must(runnerRepo, "hone", "ledger", "pull")
	if out := runner.must(runnerRepo, "hone", "verdict", "--pending"); strings.Count(out, "rejected-gate") != 2 {
		t.Fatalf("the runner's pending verdicts:\n%s", out)
	}
	runner.must(runnerRepo, "hone", "ledger", "push")
	if out := runner.must(runnerRepo, "hone", "verdict", "--pending"); !strings.Contains(out, "no pending proposals") {
		t.Fatalf("a second pending run:\n%s", out)
	}

	// Both clones show every verdict's signer the same way, and plain git
	// verifies the runner's signatures in the agent's clone.
	agent.must(agentRepo, "hone", "ledger", "pull")
	for _, side := range []struct {
		a    *account
		repo string
		want int
	}{{runner, runnerRepo, 2}, {agent, agentRepo, 3}} {
		vs := verdictsOf(t, side.a, side.repo)
		trusted := 0
		for _, v := range vs {
			switch {
			case *v.Trusted && v.Signer == "runner@ci":
				trusted++
			case *v.Trusted || v.Signer != "untrusted":
				t.Errorf("%s: verdict %s signer %q trusted %v", side.a.name, v.ID, v.Signer, *v.Trusted)
			}
		}
		if len(vs) != side.want || trusted != 2 {
			t.Errorf("%s: %d verdicts, %d trusted: %+v", side.a.name, len(vs), trusted, vs)
		}
		for _, v := range vs {
			if v.Signer != "runner@ci" {
				continue
			}
			_, errOut, code := side.a.run(side.repo, "git", "-c", "gpg.ssh.allowedSignersFile=.hone/allowed_signers", "verify-commit", v.AddedBy)
			if code != 0 || !strings.Contains(errOut, `Good "git" signature for runner@ci`) {
				t.Errorf("%s: git verify-commit %s: exit %d\n%s", side.a.name, v.AddedBy, code, errOut)
			}
		}
	}
	if out, errOut, code := runner.run(runnerRepo, "hone", "ledger", "verify", "--require-signed"); code != 0 {
		t.Errorf("the runner's ledger, verify --require-signed: exit %d\n%s%s", code, out, errOut)
	}
}

func verdictsOf(t *testing.T, a *account, repo string) []listedVerdict {
	t.Helper()
	var vs []listedVerdict
	if err := json.Unmarshal([]byte(a.must(repo, "hone", "ledger", "list", "--kind", "verdict", "--json")), &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

const deployToml = `[ledger]
allowed_signers = ".hone/allowed_signers"

[bench]
pairs = 3
max_pairs = 3
# one code layout: these verdicts prove what the server and the runner
# decide, not a measurement, and each layout is a build per side
layouts = 1

[targets.c]
build = "cc -o $HONE_OUT/prog prog.c"

  [[targets.c.gates]]
  name = "golden"
  run = "$HONE_OUT/prog"
  equivalence = true

  [targets.c.bench]
  run = "$HONE_OUT/prog"
`

func TestMain(m *testing.M) { e2e.Main(m) }
