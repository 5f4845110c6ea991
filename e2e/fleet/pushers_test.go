package fleet

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// Turns of the queue cannot be bought with names. Where the server says
// whom it authenticated ([guard] pusher), one identity pushes four
// proposals from four clones under four committer names; a second
// identity's proposal, pushed after them, is judged within the first two
// rounds: the queue takes turns by authenticated identity (the server's
// record of who pushed each proposal), not by committer. Nobody but the
// server writes that record.
func TestManyCommitterNamesBuyAPusherNoTurns(t *testing.T) {
	f := newFixtureWith(t, 1, honeToml+"\n[guard]\npusher = \"HONE_PUSHER\"\n")
	as := func(dir, identity string) string {
		f.ident[dir] = append(f.ident[dir], "HONE_PUSHER="+identity)
		return dir
	}
	var flood []string
	for i := range 4 {
		dir := as(f.agent(fmt.Sprintf("name%d", i)), "mallory")
		flood = append(flood, f.publish(dir, fmt.Sprintf("flood %d", i), patch(fmt.Sprintf(`int main(void) { puts("1"); return %d - %d; }`, i, i))))
	}
	alice := as(f.agent("alice"), "alice")
	honest := f.publish(alice, "honest idea", honestPatch)

	recorded := f.must(f.server, "git", "ls-tree", "-r", ledger.PushersRef)
	if strings.Count(recorded, "\n") != len(flood)+1 {
		t.Fatalf("the server's record of pushers holds, want %d proposals:\n%s", len(flood)+1, recorded)
	}
	mallory := f.clone("mallory", "")
	forged := strings.TrimSpace(f.must(mallory, "git", "commit-tree", "-m", "forged", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
	for _, spec := range []string{"+" + forged + ":" + ledger.PushersRef, ":" + ledger.PushersRef, forged + ":" + ledger.PushersRefPrefix + "mine"} {
		if _, errOut, code := f.run(mallory, "git", "push", "origin", spec); code == 0 || !strings.Contains(errOut, "no push writes or deletes it") {
			t.Errorf("git push %s: exit %d, want the hook's refusal\n%s", spec, code, errOut)
		}
	}

	runner := as(f.clone("runner0", f.keys[0]), "runner0")
	var judged []string
	for round := 1; round <= 2; round++ {
		out := f.must(runner, "hone", "runner", "--once", "--name", "runner0", "--class", "ci")
		fields := strings.Fields(out)
		if len(fields) < 2 || strings.Contains(out, "not judged") {
			t.Fatalf("round %d judged nothing: %q", round, out)
		}
		judged = append(judged, fields[0])
	}
	if !slices.Contains(judged, honest) {
		t.Fatalf("the first two rounds judged %v; alice's %s waits behind mallory's %v under their many names", judged, honest, flood)
	}
}
