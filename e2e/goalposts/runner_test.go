package goalposts

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// in is w working in another clone.
func (w *world) in(dir string) *world {
	c := *w
	c.dir = dir
	return &c
}

// The deployment: an agent pushes proposals it made at older pins (main
// moved back in its own clone for a moment) to a bare remote whose
// pre-receive hook runs hone; the runner, holding the only signing key,
// fetches and judges everything pending. Each is a signed error verdict,
// stale-pin, none of the patch's code ran on the runner, and a fresh clone
// reads them so.
func TestRunnerJudgesOldPinsStaleWithoutRunningThem(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("needs ssh-keygen")
	}
	w := newWorld(t)
	key := filepath.Join(w.home, "runner-key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runner", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	w.write(map[string]string{
		"hone.toml":             "[ledger]\nallowed_signers = \".hone/allowed_signers\"\n\n" + tipToml,
		".hone/allowed_signers": "runner@ci " + string(pub),
	})
	w.commit("trust the runner")
	server := filepath.Join(filepath.Dir(w.dir), "server.git")
	w.git("init", "-q", "--bare", "-b", "main", server)
	w.git("push", "-q", server, "main")
	hook := "#!/bin/sh\nexec " + w.hone + " guard pre-receive\n"
	if err := os.WriteFile(filepath.Join(server, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	w.git("remote", "add", "origin", server)

	diff := w.patchDiff("REPS * walk(steps)")
	stale := map[string]bool{}
	for _, name := range []string{"no unit gate", "weak isolation"} {
		stale[w.proposeAt(w.pins[name], "one walk at "+name, diff)] = true
	}
	if out, errOut, code := w.run(nil, w.hone, "ledger", "push"); code != 0 {
		// A server that refuses proposals at pins it does not accept is
		// the other half of the same rule.
		if code == 3 && strings.Contains(out+errOut, "pin") {
			t.Logf("the server refused the stale proposals:\n%s", errOut)
			return
		}
		t.Fatalf("the agent's push: exit %d\n%s%s", code, out, errOut)
	}

	runner := w.in(filepath.Join(filepath.Dir(w.dir), "runner"))
	w.git("clone", "-q", server, runner.dir)
	runner.git("config", "hone.signingkey", key)
	runner.mustHone("ledger", "pull")
	var judged []struct {
		PatchID string `json:"patch_id"`
		Entry   *entry `json:"entry"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal([]byte(runner.mustHone("verdict", "--pending", "--json")), &judged); err != nil {
		t.Fatal(err)
	}
	if len(judged) != len(stale) {
		t.Fatalf("the runner judged %+v, want the %d stale proposals", judged, len(stale))
	}
	for _, j := range judged {
		if !stale[j.PatchID] || j.Entry == nil {
			t.Fatalf("judgement %+v", j)
		}
		runner.nothingRan(*j.Entry, "stale-pin")
	}
	runner.mustHone("ledger", "push")

	fresh := w.in(filepath.Join(filepath.Dir(w.dir), "fresh"))
	w.git("clone", "-q", server, fresh.dir)
	fresh.mustHone("ledger", "pull")
	var listed []struct {
		PatchID string `json:"patch_id"`
		Verdict string `json:"verdict"`
		Signer  string `json:"signer"`
		Trusted *bool  `json:"trusted"`
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal([]byte(fresh.mustHone("ledger", "list", "--kind", "verdict", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(stale) {
		t.Fatalf("a fresh clone lists %+v", listed)
	}
	for _, v := range listed {
		if v.Verdict != "error" || v.Signer != "runner@ci" || v.Trusted == nil || !*v.Trusted || !strings.Contains(v.Summary, "stale-pin") {
			t.Errorf("as a fresh clone reads it: %+v", v)
		}
	}
	if out := runner.mustHone("verdict", "--pending"); !strings.Contains(out, "no pending proposals") {
		t.Errorf("the stale proposals are pending again:\n%s", out)
	}
}
