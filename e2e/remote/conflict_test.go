package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pushInbox plants files on top of the clone's ledger tip by plain git and
// pushes the result to inbox writer of the server, returning what git
// printed and its exit status.
func (w *world) pushInbox(dir, writer string, files map[string]string, also ...string) (string, int) {
	w.t.Helper()
	tip := strings.TrimSpace(w.must(dir, "git", "rev-parse", "refs/heads/hone/ledger"))
	c := w.plant(dir, tip, files)
	w.must(dir, "git", "update-ref", "refs/heads/hone/ledger", tip)
	out, errOut, code := w.run(dir, append([]string{"git", "push", "origin", c + ":refs/hone/inbox/" + writer + "/ledger"}, also...)...)
	return out + errOut, code
}

// honestStepsStillWork is every honest step after an attack: a pull and a
// push in the agent's and the runner's clones, a fresh clone, one runner
// round by `hone runner --once`, and, when verifies, a fresh clone's
// verify.
func (w *world) honestStepsStillWork(runner string, verifies bool) {
	w.t.Helper()
	honest := w.clone("honest-"+filepath.Base(runner), "honest")
	w.must(honest, "hone", "ledger", "push")
	w.propose(honest, `puts("3");`, "print three")
	w.must(honest, "hone", "ledger", "push")
	w.must(runner, "hone", "ledger", "pull")
	w.must(runner, "hone", "runner", "--once", "--name", "runner0")
	w.must(runner, "hone", "ledger", "push")
	if verifies {
		fresh := w.clone("fresh-"+filepath.Base(runner), "")
		w.must(fresh, "hone", "ledger", "verify")
	}
}

// The attack of issue 44: two inboxes each add a file beside the same
// entry, <id>.note, with different bytes. Had the server taken both, every
// fold that met the two would have stopped on the path, and with it every
// pull, push and runner step. The server takes an attachment only in the
// commit that adds its entry, so both are refused, and every honest step
// still works.
func TestTwoInboxesCannotAttachDifferentFilesToOneEntry(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent, note := w.proposedAttachment()
	for i, writer := range []string{"a1a1a1a1a1a1a1a1", "a2a2a2a2a2a2a2a2"} {
		out, code := w.pushInbox(agent, writer, map[string]string{note: strings.Repeat("x", i+1)})
		if code == 0 || !strings.Contains(out, "attachment without its entry") {
			t.Fatalf("inbox %s given %s: exit %d, want a refusal\n%s", writer, note, code, out)
		}
	}
	if refs := w.serverRefs(); strings.Contains(refs, "a1a1a1a1") || strings.Contains(refs, "a2a2a2a2") {
		t.Fatalf("a refused inbox is on the server:\n%s", refs)
	}
	w.honestStepsStillWork(w.clone("runner", "runner"), true)
}

// The same attack by whole entries: two inboxes hold one entry path (two
// entries sharing one id) with different bytes. The first is an ordinary
// append; the second is refused because a ledger ref of the server already
// holds the path with other bytes.
func TestTwoInboxesCannotHoldOneEntryPathWithDifferentBytes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent, _ := w.pushedProposal()
	p, main := profileAt("aa", "main")
	_, other := profileAt("aa", "other")
	if out, code := w.pushInbox(agent, "a1a1a1a1a1a1a1a1", map[string]string{p: main}); code != 0 {
		t.Fatalf("the first inbox is an ordinary append, refused:\n%s", out)
	}
	out, code := w.pushInbox(agent, "a2a2a2a2a2a2a2a2", map[string]string{p: other})
	if code == 0 || !strings.Contains(out, "already holds with other bytes") {
		t.Fatalf("the second inbox holding %s with other bytes: exit %d, want a refusal\n%s", p, code, out)
	}
	w.honestStepsStillWork(w.clone("runner", "runner"), true)
}

// A fold meets what no hook stopped (a race between two pushes, a server
// that runs no hooks): two inboxes hold one path with different bytes. A
// pull folds the first by name and skips and reports the other; it never
// fails whole, and every later pull, push and runner step works.
func TestAConflictingInboxIsSkippedNotFatal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent, note := w.proposedAttachment()
	hook := filepath.Join(w.server, "hooks", "pre-receive")
	saved, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	for i, writer := range []string{"a1a1a1a1a1a1a1a1", "a2a2a2a2a2a2a2a2"} {
		if out, code := w.pushInbox(agent, writer, map[string]string{note: strings.Repeat("x", i+1)}); code != 0 {
			t.Fatalf("with no hook the push is taken:\n%s", out)
		}
	}
	if err := os.WriteFile(hook, saved, 0o755); err != nil {
		t.Fatal(err)
	}
	runner := w.clone("runner", "runner")
	out, errOut, code := w.run(runner, "hone", "ledger", "pull", "--json")
	if code != 0 || !strings.Contains(out, `"inboxes_skipped"`) || !strings.Contains(out, "a2a2a2a2a2a2a2a2") {
		t.Fatalf("pull: exit %d, want a2's inbox skipped and reported\n%s%s", code, out, errOut)
	}
	_, errOut, code = w.run(runner, "hone", "ledger", "pull")
	if code != 0 || !strings.Contains(errOut, "a2a2a2a2a2a2a2a2") {
		t.Fatalf("pull: exit %d, want a note naming the skipped inbox\n%s", code, errOut)
	}
	w.honestStepsStillWork(runner, false)
	fresh := w.clone("fresh", "")
	out, _, code = w.run(fresh, "hone", "ledger", "verify")
	if code != 5 || !strings.Contains(out, "inbox/a2a2a2a2a2a2a2a2/ledger:"+note) {
		t.Fatalf("verify on a fresh clone: exit %d, want the skipped inbox reported\n%s", code, out)
	}
}

// proposedAttachment has an agent propose and push a patch, and returns
// its clone and the path an attachment named "note" beside the proposal's
// entry would have.
func (w *world) proposedAttachment() (agent, note string) {
	w.t.Helper()
	agent = w.clone("agent", "agent")
	id := w.propose(agent, `puts("2");`, "print two")
	w.must(agent, "hone", "ledger", "push")
	p, _ := w.entry(agent, "proposal", id)
	return agent, strings.TrimSuffix(p, ".toml") + ".note"
}

// profileAt is a profile entry whose id ends in tag (two hex digits) and
// that names hotspot: its path and its bytes.
func profileAt(tag, hotspot string) (path, body string) {
	id := "00e8d4a51000000000000000000000" + tag
	return "c/profile/" + tag + "/" + id + ".toml",
		"schema = 1\nid = \"" + id + "\"\nkind = \"profile\"\ntarget = \"c\"\ncreated = 2001-09-09T01:46:40Z\nhotspot = \"" + hotspot + "\"\n"
}
