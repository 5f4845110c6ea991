package ledger_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// preReceiveMain lets the test binary be a server's pre-receive hook that
// holds the ledger branch to the server's rules (ledger.Server.CheckBranch),
// the way hone guard does on a real server. testgit's init drops the
// variables that show a hook the pushed objects in their quarantine, so the
// hook's script hands them over under other names.
func preReceiveMain() {
	os.Setenv("GIT_OBJECT_DIRECTORY", os.Getenv("HOOK_OBJECTS"))
	os.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", os.Getenv("HOOK_ALTERNATES"))
	srv := &ledger.Server{Dir: ".", Branch: "refs/heads/hone/ledger", NotesRef: "refs/notes/hone", Trust: &ledger.Trust{}}
	if err := srv.Open(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer srv.Close()
	refused := false
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 3 || f[2] != srv.Branch {
			continue
		}
		rs, _, err := srv.CheckBranch(ctx, plumbing.NewHash(f[0]), plumbing.NewHash(f[1]))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, r := range rs {
			fmt.Fprintf(os.Stderr, "%s: %s\n", r.Ref, r.Rule)
			refused = true
		}
	}
	if refused {
		os.Exit(1)
	}
	os.Exit(0)
}

// A push decides to offer the branch from the remote's refs as its pull saw
// them; another writer's offer can land before the push itself runs, with
// the very commit the pull folded in from that writer's inbox. The branch
// then contains the new tip, but not on its first-parent line, and the
// server refuses it. The offer must be conditional on the tip the pull saw,
// so that only the offer is lost, never the push of this writer's inbox
// (issue 27's fleet test met this as "remote refused the ledger push").
func TestAnOfferMadeOnAStaleViewOfTheRemoteIsLostAloneNotThePush(t *testing.T) {
	remote, first, clone := sharedRemote(t)
	hook := filepath.Join(remote, "hooks", "pre-receive")
	script := fmt.Sprintf("#!/bin/sh\nHOOK_OBJECTS=\"$GIT_OBJECT_DIRECTORY\" HOOK_ALTERNATES=\"$GIT_ALTERNATE_OBJECT_DIRECTORIES\" HONE_LEDGER_HELPER=pre-receive exec %q -test.run=^$\n", os.Args[0])
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	fl := openLedger(t, first)
	appendProfiles(t, fl, "seed", 1)
	if _, err := fl.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}

	// B's entry reaches only its inbox: its offer of the branch was lost.
	b := clone("b")
	bl := openLedger(t, b)
	if _, err := bl.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	appendProfiles(t, bl, "b", 1)
	wid, err := bl.WriterID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bTip := strings.TrimSpace(testgit.Git(t, b, "rev-parse", "refs/heads/hone/ledger"))
	testgit.Git(t, b, "push", "-q", "origin", bTip+":"+ledger.InboxLedgerRef(wid))

	a := clone("a")
	al := openLedger(t, a)
	if _, err := al.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	appendProfiles(t, al, "a", 1)

	// Between A's pull and A's push, B's offer of that same tip lands.
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	shims, mark := t.TempDir(), filepath.Join(t.TempDir(), "fired")
	shim := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
	if [ "$a" = push ] && [ ! -e %[2]q ]; then
		touch %[2]q
		%[1]q -C %[3]q push -q origin %[4]s:refs/heads/hone/ledger || exit 99
		break
	fi
done
exec %[1]q "$@"
`, realGit, mark, b, bTip)
	if err := os.WriteFile(filepath.Join(shims, "git"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", shims+string(os.PathListSeparator)+os.Getenv("PATH"))
	rep, err := al.Push(ctx, "origin")
	if _, statErr := os.Stat(mark); statErr != nil {
		t.Fatal("the race was not staged: A's push ran no git push")
	}
	if err != nil {
		t.Fatalf("A's push failed on a branch the remote moved under it: %v", err)
	}
	if rep.RemoteLedger != "inbox" {
		t.Errorf("A's offer of the branch is %q, want it left to the inbox", rep.RemoteLedger)
	}
	if got := strings.TrimSpace(testgit.Git(t, remote, "rev-parse", "refs/heads/hone/ledger")); got != bTip {
		t.Errorf("the remote's branch is %s, want B's offer %s", got, bTip)
	}

	// The next push of anyone brings every entry onto the branch.
	if _, err := al.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	tree := testgit.Git(t, remote, "ls-tree", "-r", "--name-only", "hone/ledger")
	if n := strings.Count(tree, ".toml"); n != 3 {
		t.Errorf("the remote's branch holds %d entries, want the seed's, B's and A's:\n%s", n, tree)
	}
	assertSound(t, a, al)
}
