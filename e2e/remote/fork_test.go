package remote

import (
	"path/filepath"
	"strings"
	"testing"
)

// The attack of issue 44: two servers with the same main (a fork) list one
// runner key. The agent proposes on A, A's runner judges it, and the agent
// pushes A's ledger, notes and patch ref to B with plain git, so that B
// would list a verdict its runner never judged: a free re-roll per fork.
// main names the repository ([runner] repository), and a server whose base
// names one takes a verdict only with the release of a claim created on it:
// B refuses the replay, and B's own runner still judges the proposal.
func TestAVerdictJudgedOnAForkIsRefused(t *testing.T) {
	t.Parallel()
	w := newKeys(t)
	w.tail = "\n[runner]\nrepository = \"example.org/c\"\n"
	w.seed("main", 5, "")
	a := w.server
	b := filepath.Join(w.dir, "fork.git")
	w.must(w.dir, "git", "clone", "-q", "--bare", "--no-local", a, b)
	w.must(b, "hone", "hooks", "install", "--server")

	agent, id := w.pushedProposal()
	runner := w.clone("runner", "runner")
	if out := w.must(runner, "hone", "runner", "--once", "--name", "runner0"); !strings.Contains(out, id) {
		t.Fatalf("A's runner did not judge %s:\n%s", id, out)
	}
	w.must(agent, "hone", "ledger", "pull")
	if out := w.must(agent, "git", "show", "refs/heads/hone/ledger:"+func() string { p, _ := w.entry(agent, "verdict", id); return p }()); !strings.Contains(out, `repository = "example.org/c"`) {
		t.Fatalf("the runner's verdict does not record the repository:\n%s", out)
	}
	before := w.must(b, "git", "for-each-ref")
	w.refused(agent, "comes with the release of no claim on this server", "git", "push", b,
		"refs/heads/hone/ledger:refs/heads/hone/ledger", "refs/notes/hone:refs/notes/hone", "refs/hone/patches/"+id+":refs/hone/patches/"+id)
	w.refused(agent, "comes with the release of no claim on this server", "git", "push", b,
		"refs/heads/hone/ledger:refs/hone/inbox/a1a1a1a1a1a1a1a1/ledger", "refs/hone/patches/"+id+":refs/hone/patches/"+id)
	// The runner's signed commit that added the started entry alone,
	// which would end the attempt on B as cancelled, unjudged.
	sp, _ := w.entry(agent, "started", id)
	started := strings.Fields(w.must(agent, "git", "log", "--format=%H", "--diff-filter=A", "refs/heads/hone/ledger", "--", sp))[0]
	w.refused(agent, "started entry", "git", "push", b, started+":refs/hone/inbox/a1a1a1a1a1a1a1a1/ledger", "refs/hone/patches/"+id+":refs/hone/patches/"+id)
	if after := w.must(b, "git", "for-each-ref"); after != before {
		t.Fatalf("B's refs changed:\n%s\nwas\n%s", after, before)
	}

	// B's own runner judges the proposal, pushed to B the honest way.
	w.server = b
	onB := w.clone("agent-b", "agent")
	idB := w.propose(onB, `puts("2");`, "print two")
	w.must(onB, "hone", "ledger", "push")
	runnerB := w.clone("runner-b", "runner")
	if out := w.must(runnerB, "hone", "runner", "--once", "--name", "runner0"); !strings.Contains(out, idB) {
		t.Fatalf("B's runner did not judge %s:\n%s", idB, out)
	}
	fresh := w.clone("fresh-b", "")
	w.must(fresh, "hone", "ledger", "verify", "--require-signed")
	if out := w.must(fresh, "hone", "ledger", "list", "--kind", "verdict"); strings.Count(out, "runner@ci") != 1 {
		t.Fatalf("B lists other than its own runner's one verdict:\n%s", out)
	}
}

// judgedOnA is a server whose main names repository example.org/a, with
// one proposal its runner judged: the agent's and the runner's clones, and
// the patch id.
func judgedOnA(t *testing.T) (w *world, agent, runner, id string) {
	w = newKeys(t)
	w.tail = "\n[runner]\nrepository = \"example.org/a\"\n"
	w.seed("main", 5, "")
	agent, id = w.pushedProposal()
	runner = w.clone("runner", "runner")
	w.must(runner, "hone", "runner", "--once", "--name", "runner0")
	return w, agent, runner, id
}

// nameB commits, in the agent's clone, a main naming repository
// example.org/b, and pushes it with also to server b.
func (w *world) nameB(agent, b string, also ...string) {
	w.must(agent, "git", "pull", "-q", "--ff-only", "origin", "main")
	toml := w.must(agent, "git", "show", "HEAD:hone.toml")
	w.write(agent, map[string]string{"hone.toml": strings.Replace(toml, "example.org/a", "example.org/b", 1)})
	w.must(agent, "git", "commit", "-q", "-am", "another repository")
	w.must(agent, append([]string{"git", "push", "-q", b, "HEAD:refs/heads/main"}, also...)...)
}

// Where no hook runs (a forge that runs none), a verdict judged for one
// repository can be pushed into another whose main names another
// repository: every view shows it as judged for another repository, not
// trusted, whoever signed it, and hone ledger verify --require-signed
// fails on it.
func TestAVerdictForAnotherRepositoryIsNotTrusted(t *testing.T) {
	t.Parallel()
	w, agent, _, id := judgedOnA(t)
	a := w.server
	w.must(agent, "hone", "ledger", "pull")
	b := filepath.Join(w.dir, "other.git")
	w.must(w.dir, "git", "init", "-q", "--bare", "-b", "main", b)
	w.nameB(agent, b, "refs/heads/hone/ledger:refs/heads/hone/ledger", "refs/notes/hone:refs/notes/hone", "refs/hone/patches/"+id+":refs/hone/patches/"+id)
	w.server = b
	fresh := w.clone("fresh-b", "")
	out := w.must(fresh, "hone", "ledger", "list", "--kind", "verdict")
	if !strings.Contains(out, "other-repository") || strings.Contains(out, "runner@ci") {
		t.Fatalf("B lists A's verdict as trusted:\n%s", out)
	}
	if out, errOut, code := w.run(fresh, "hone", "ledger", "verify", "--require-signed"); code == 0 || !strings.Contains(out, "other-repository") {
		t.Fatalf("verify --require-signed on B: exit %d\n%s%s", code, out, errOut)
	}
	w.server = a
	if out := w.must(w.clone("fresh-a", ""), "hone", "ledger", "list", "--kind", "verdict"); !strings.Contains(out, "runner@ci") {
		t.Fatalf("A lists its own verdict as untrusted:\n%s", out)
	}
}

// A person's --rejudge comes without a claim: the server whose runner
// judged the patch takes it, and it is bound to that repository like any
// verdict. Replayed into another repository that holds the verdict it
// rejudges (a copy made after the judgement, whose main now names
// another repository), it is refused.
func TestARejudgeIsBoundToItsRepository(t *testing.T) {
	t.Parallel()
	w, agent, runner, id := judgedOnA(t)
	b := filepath.Join(w.dir, "other.git")
	w.must(w.dir, "git", "clone", "-q", "--bare", "--no-local", w.server, b)
	w.nameB(agent, b)
	w.must(b, "hone", "hooks", "install", "--server")

	w.must(runner, "hone", "ledger", "pull")
	w.must(runner, "hone", "verdict", id, "--rejudge", "the machine was busy")
	w.must(runner, "hone", "ledger", "push")

	w.must(agent, "hone", "ledger", "pull")
	before := w.must(b, "git", "for-each-ref")
	w.refused(agent, `repository "example.org/a"; this server is "example.org/b"`, "git", "push", b,
		"refs/heads/hone/ledger:refs/heads/hone/ledger", "refs/notes/hone:refs/notes/hone")
	if after := w.must(b, "git", "for-each-ref"); after != before {
		t.Fatalf("B's refs changed:\n%s\nwas\n%s", after, before)
	}
}
