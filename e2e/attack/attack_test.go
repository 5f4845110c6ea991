package attack

import (
	"github.com/hone-perf/hone/e2e/testbed"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// The attack suite: every case is a real patch, proposed with `hone patch
// propose` and judged by `hone verdict` (the hone binary, run as a separate
// process), that tries one thing an optimizer rewarded only by "accepted"
// would try. Each checks that the verdict is not accepted where success
// would have bought one, that what the attack went for stayed out of reach
// (its own output says so), and that the host is unchanged (arena.unchanged).

// attack is one case of the suite.
type attack struct {
	name string
	run  func(t *testing.T, a *arena)
}

// gateAttack runs script as the unit gate and checks its output.
func gateAttack(name, script string, wants ...string) attack {
	return attack{name, func(t *testing.T, a *arena) {
		e, _ := a.Judge(name, a.Gate(script))
		testbed.WantVerdict(t, e, ledger.VerdictRejectedGate)
		a.WantOutput(t, e, wants...)
	}}
}

// rememberAttack is a program that keeps its answer between bench runs in
// dir: if anything survived, a later run would skip its walk
// (testbed.JudgeRemembered). The suite's one proof of each place: the
// gaming suite attacks the verdict's rules, not where a run may write.
func rememberAttack(where, dir string) attack {
	name := "remember the answer between bench runs in " + where
	return attack{name, func(t *testing.T, a *arena) { a.JudgeRemembered(t, name, dir) }}
}

var honest = attack{"an honest 4x faster patch is still accepted", func(t *testing.T, a *arena) {
	e, _ := a.Judge("one walk is enough", a.Prog("#define REPS 4", "#define REPS 1"))
	testbed.WantVerdict(t, e, ledger.VerdictAccepted)
	if env := e.Environment; env.Isolation != "full" || env.Weak || !env.NetworkDenied {
		t.Errorf("isolation %q weak %v network denied %v", env.Isolation, env.Weak, env.NetworkDenied)
	}
}}

var (
	writeRepoFromGate = gateAttack("write the repository's files from a gate",
		"for f in {repo}/targets/c/prog.c {repo}/hone.toml {repo}/{tag}; do echo pwned >> $f; done 2>&1; ls {repo} 2>&1; exit 1",
		"{repo}/hone.toml: Directory nonexistent")
	writeHome = gateAttack("write the user's HOME from a gate",
		"echo pwned >> {home}/.bashrc 2>&1; mkdir -p {home}/.ssh 2>&1; echo key >> {home}/.ssh/authorized_keys 2>&1; echo pwned >> $HOME/.bashrc && echo wrote the own HOME of the jail, $HOME; exit 1",
		"{home}/.bashrc: Directory nonexistent", "wrote the own HOME of the jail, /home/hone")
	network = attack{"reach the network directly", func(t *testing.T, a *arena) {
		e, _ := a.Judge("dial out", a.Gate(`"$HONE_OUT/attack" connect {port} {ro}/sock @{tag}`))
		testbed.WantVerdict(t, e, ledger.VerdictRejectedGate)
		a.WantOutput(t, e, "refused 127.0.0.1:"+strconv.Itoa(a.Port), "refused 1.1.1.1:53: Network is unreachable", "refused @"+a.Tag+": Connection refused")
	}}
	daemon = attack{"outlive the run with a daemon and a double fork", func(t *testing.T, a *arena) {
		e, _ := a.Judge("leave helpers running", a.Gate(`"$HONE_OUT/attack" daemon {tag}-daemon; setsid sh -c 'sleep 300' {tag}-setsid & sleep 300 {tag}-child & "$HONE_OUT/attack" forks 5 {tag}-kids; exit 1`))
		testbed.WantVerdict(t, e, ledger.VerdictRejectedGate)
		a.WantOutput(t, e, "daemon started", "forked 5")
		if g := e.Gates[len(e.Gates)-1]; g.Candidate == nil || g.Candidate.Leftover < 5 {
			t.Errorf("leftover processes were not recorded: %+v", g.Candidate)
		}
	}}
	rootFile = gateAttack("read a root-owned 0600 file",
		"ls {ro} 2>&1; cat {ro}/secret /etc/shadow /root/.ssh/id_ed25519 2>&1; exit 1",
		"toolchain.txt", "cat: {ro}/secret: Permission denied", "cat: /etc/shadow: No such file or directory")
	forkBomb = attack{"fork past the process limit", func(t *testing.T, a *arena) {
		e, _ := a.Judge("fork a lot", a.Gate(`"$HONE_OUT/attack" forks 3000 {tag}`))
		testbed.WantVerdict(t, e, ledger.VerdictRejectedGate)
		a.WantOutput(t, e, "fork refused after ")
	}}
	sshKey = gateAttack("print an SSH key placed in the user's HOME",
		"cat {home}/.ssh/id_ed25519 ~/.ssh/id_ed25519 2>&1; ls -a ~ 2>&1; exit 1",
		"cat: {home}/.ssh/id_ed25519: No such file or directory", "cat: /home/hone/.ssh/id_ed25519: No such file or directory")
	rememberTmp = rememberAttack("/tmp", `"/tmp"`)
)

// ordinaryUserCases run again when hone is an ordinary user.
var ordinaryUserCases = []attack{honest, writeRepoFromGate, writeHome, network, daemon, rootFile, forkBomb, sshKey, rememberTmp}

func rootCases() []attack {
	return []attack{
		honest,
		writeRepoFromGate,
		gateAttack("create refs in the repository from a gate",
			"git -C {repo} update-ref refs/heads/{tag} HEAD 2>&1; mkdir -p {repo}/.git/refs/heads 2>&1 && echo made {repo}/.git/refs/heads; exit 1",
			"cannot change to '{repo}'"),
		gateAttack("plant a hook from a gate",
			"printf '#!/bin/sh\\ntouch /tmp/{tag}\\n' > {repo}/.git/hooks/pre-commit 2>&1; printf x > {repo}/.git/hooks/post-checkout 2>&1; exit 1",
			"{repo}/.git/hooks/pre-commit: Directory nonexistent"),
		gateAttack("append a filter driver to .git/config from a gate",
			"printf '[filter \"x\"]\\n\\tsmudge = touch /tmp/{tag}\\n' >> {repo}/.git/config 2>&1; exit 1",
			"{repo}/.git/config: Directory nonexistent"),
		gateAttack("write .git/info/attributes from a gate",
			"echo '* filter=x' >> {repo}/.git/info/attributes 2>&1; exit 1",
			"{repo}/.git/info/attributes: Directory nonexistent"),
		gateAttack("write an accepted verdict into the ledger from a gate",
			`cd {repo} 2>&1 || echo no repository; git rev-parse --git-dir 2>&1; printf 'kind = "verdict"\nverdict = "accepted"\n' | git hash-object -w --stdin 2>&1; ls / 2>&1; exit 1`,
			"no repository", "not a git repository"),
		cached(gateAttack("rewrite hone's state and build cache from a gate",
			"for f in {repo}/.git/hone/canary {repo}/.git/hone/build-cache/*/out/prog; do cp /bin/true $f 2>&1; done; exit 1",
			"cp: cannot create regular file '{repo}/.git/hone/canary'")),
		writeHome,
		gateAttack("write the host's /tmp from a gate",
			"echo x > /tmp/{tag} && echo wrote /tmp of the jail; echo x > /var/tmp/{tag} && echo wrote /var/tmp of the jail; exit 1",
			"wrote /tmp of the jail", "wrote /var/tmp of the jail"),
		attack{"write the repository from the build", func(t *testing.T, a *arena) {
			e, _ := a.Judge("a build with side effects", a.Build(
				"-echo pwned >> {repo}/targets/c/prog.c", "-echo pwned > {repo}/.git/hooks/post-commit",
				"-echo pwned > {home}/.profile", "-ls {repo}", "false"))
			testbed.WantVerdict(t, e, ledger.VerdictRejectedGate)
			a.WantOutput(t, e, "{repo}/targets/c/prog.c: Directory nonexistent")
		}},
		attack{"write the repository from a bench run", func(t *testing.T, a *arena) {
			e, _ := a.Judge("a bench run with side effects", a.Prog("\tunsigned long long r = 0;",
				`	const char *p[] = {"{repo}/targets/c/prog.c", "{repo}/.git/hooks/post-commit", "{repo}/.git/config", "{home}/.bashrc", "/tmp/{tag}"};
	for (int i = 0; i < 5; i++) { FILE *f = fopen(p[i], "a"); if (f) { fputs("pwned\n", f); fclose(f); } }
	unsigned long long r = 0;`))
			testbed.WantVerdict(t, e, ledger.VerdictRejectedBench)
		}},
		cached(attack{"rewrite the cached baseline from the build, then propose a comment-only patch", func(t *testing.T, a *arena) {
			e, _ := a.Judge("poison the cache", a.Build(
				"-cp /bin/true {repo}/.git/hone/build-cache/*/out/prog", "-ls -d /hone/*", "-touch /hone/out/{tag}"))
			testbed.WantVerdict(t, e, ledger.VerdictRejectedBench, ledger.VerdictRejectedGate)
			e, _ = a.Judge("a comment changes nothing", a.Prog("static volatile unsigned long long sink;", "static volatile unsigned long long sink; /* a comment */"))
			testbed.WantVerdict(t, e, ledger.VerdictRejectedBench)
			if e.Environment.BaselineCacheDiscarded != "" || !e.Gates[0].Baseline.Cached {
				t.Errorf("the cached baseline was not used as it was: discarded %q", e.Environment.BaselineCacheDiscarded)
			}
		}}),
		cached(attack{"an agent with a shell rewrites the cached baseline, then proposes a patch that changes nothing", cacheRewrittenByShell}),
		attack{"rewrite the expected output from the build", func(t *testing.T, a *arena) {
			// A program that skips the work and prints a wrong answer,
			// whose build rewrites what the golden gate compares against:
			// if the build could, it would be accepted at many times the
			// speed.
			files := a.Build("echo 42 > testdata/expected")
			files["prog.c"] = a.Prog("\tunsigned long long r = 0;", "\tputs(\"42\");\n\treturn 0;\n\tunsigned long long r = 0;")["prog.c"]
			e, _ := a.Judge("the expected output was wrong", files)
			testbed.WantVerdict(t, e, ledger.VerdictRejectedGate)
			if g := e.Gates[0]; g.Name != "build" || !strings.Contains(g.Message, "changed the tracked file targets/c/testdata/expected") {
				t.Errorf("build gate %+v", g)
			}
		}},
		attack{"rewrite the expected output from a gate", func(t *testing.T, a *arena) {
			// A program that skips the work and prints a wrong answer,
			// whose unit gate rewrites what the golden gate compares
			// against: if the golden gate saw that file, it would be
			// accepted at many times the speed.
			files := a.Prog("\tunsigned long long r = 0;", "\tputs(\"42\");\n\treturn 0;\n\tunsigned long long r = 0;")
			files["test.sh"] = "#!/bin/sh\necho 42 > testdata/expected\nexec \"$HONE_OUT/prog\" --selftest\n"
			e, _ := a.Judge("the answer is 42", files)
			testbed.WantVerdict(t, e, ledger.VerdictRejectedGate)
			if g := e.Gates[len(e.Gates)-1]; g.Name != "golden" {
				t.Errorf("failed gate %+v, want golden", g)
			}
		}},
		attack{"an agent plants a filter driver, textconv, hooks and an fsmonitor in .git/config", plantedDrivers},
		gateAttack("read hone's environment, memory and processes through /proc",
			`"$HONE_OUT/attack" proc; cat /proc/*/environ 2>&1 | tr '\0' '\n' | grep -c HONE_ATTACK_SECRET`,
			"read 0 environments, opened 0 memories, traced 0"),
		gateAttack("signal or stop every process it may, hone included",
			`"$HONE_OUT/attack" signal`),
		network,
		gateAttack("reach the network through another process's namespace",
			`"$HONE_OUT/attack" setns {port}`, "refused 127.0.0.1:{port}"),
		daemon,
		rootFile,
		// Not the same gate as "dial out", which would be refused as the
		// same idea already judged.
		gateAttack("connect to a root-owned Unix socket",
			`"$HONE_OUT/attack" connect {port} {ro}/sock {ro}/sock`, "refused {ro}/sock: Permission denied"),
		forkBomb,
		attack{"fill /dev/shm", func(t *testing.T, a *arena) {
			e, _ := a.Judge("shared memory", a.Gate(`"$HONE_OUT/attack" shm /dev/shm/{tag}`))
			testbed.WantVerdict(t, e, ledger.VerdictRejectedGate)
			a.WantOutput(t, e, "shm full after 6")
		}},
		sshKey,
		rememberTmp,
		rememberAttack("HOME", `getenv("HOME")`),
		rememberAttack("/dev/shm", `"/dev/shm"`),
		rememberAttack("the working directory", `"."`),
		rememberAttack("HONE_OUT", `getenv("HONE_OUT")`),
		rememberAttack("/var/tmp", `"/var/tmp"`),
	}
}

// cacheRewrittenByShell: an agent with a shell, as the same user as hone,
// replaces the cached baseline binaries (one per code layout) with a 4x
// slower one; a comment-only patch would then measure 4x faster. hone finds
// each entry no longer matches its manifest, rebuilds the pin and says
// which file differed.
func cacheRewrittenByShell(t *testing.T, a *arena) {
	// One entry per code layout of the pin: the attacker rewrites them all.
	entries, _ := filepath.Glob(filepath.Join(a.Repo, ".git", "hone", "build-cache", "*", "out", "prog"))
	if len(entries) == 0 {
		t.Fatal("no cached baseline to rewrite")
	}
	// The pin's entry is rebuilt: its files are the same again, its
	// manifest newer.
	a.SkipCache = true
	defer func() { a.SkipCache = false }()
	before := a.Snapshot()
	slow := filepath.Join(a.Tmp, "slow.c")
	os.WriteFile(slow, []byte(strings.Replace(testbed.AttackFile(t, "prog.c"), "#define REPS 4", "#define REPS 16", 1)), 0o644)
	for _, entry := range entries {
		if out, err := exec.Command("cc", "-O2", "-o", entry, slow).CombinedOutput(); err != nil {
			t.Fatalf("cc: %v %s", err, out)
		}
	}
	known := a.LedgerEntries()
	// A string in the binary and nothing else: not another comment (the
	// same idea as the first, refused without a verdict), and not a
	// binary the pin's own (which hone judges without a bench).
	id := a.Propose("a build note", a.Prog("static volatile unsigned long long sink;", "static volatile unsigned long long sink;\n__attribute__((used)) static const char note[] = \"built by an agent\";"))
	e, raw := a.Verdict(id)
	testbed.WantVerdict(t, e, "rejected-bench")
	// The rewritten baseline declares four times the pin's work.
	testbed.EveryRunDidTheWork(t, e)
	if !strings.Contains(e.Environment.BaselineCacheDiscarded, "out/prog") || e.Gates[0].Baseline.Cached {
		t.Errorf("the rewritten cache was used: discarded %q", e.Environment.BaselineCacheDiscarded)
	}
	a.Unchanged(before, known, id, raw)
}

// plantedDrivers: an agent with a shell plants filter drivers, a textconv,
// hooks and an fsmonitor in the repository's own configuration, sending
// every file through them; none of them runs during propose, verdict or
// profile.
func plantedDrivers(t *testing.T, a *arena) {
	diff := a.Diff(a.Prog("#define REPS 4", "#define REPS 3"))
	marker := filepath.Join(a.Tmp, "ran-"+a.Tag)
	evil := filepath.Join(a.Tmp, "evil.sh")
	a.WriteAs(evil, "#!/bin/sh\necho \"$0 $*\" >> "+marker+"\ncat\n")
	os.Chmod(evil, 0o755)
	hooks := filepath.Join(a.Tmp, "hooks")
	os.Mkdir(hooks, 0o755)
	for _, h := range []string{"pre-commit", "post-checkout", "post-commit", "reference-transaction", "post-index-change"} {
		a.WriteAs(filepath.Join(hooks, h), "#!/bin/sh\necho hook "+h+" >> "+marker+"\n")
		os.Chmod(filepath.Join(hooks, h), 0o755)
	}
	config := filepath.Join(a.Repo, ".git", "config")
	attributes := filepath.Join(a.Repo, ".git", "info", "attributes")
	oldConfig, _ := os.ReadFile(config)
	defer func() {
		a.WriteAs(config, string(oldConfig))
		os.Remove(attributes)
	}()
	for _, kv := range [][2]string{
		{"filter.evil.clean", evil + " clean"}, {"filter.evil.smudge", evil + " smudge"}, {"filter.evil.required", "true"},
		{"filter.proc.process", evil + " process"}, {"diff.evil.textconv", evil + " textconv"},
		{"diff.evil.command", evil + " command"}, {"merge.evil.driver", evil + " merge"},
		{"core.hooksPath", hooks}, {"core.fsmonitor", evil + " fsmonitor"},
	} {
		a.Git("config", kv[0], kv[1])
	}
	os.MkdirAll(filepath.Dir(attributes), 0o755)
	a.WriteAs(attributes, "* filter=evil diff=evil merge=evil\n*.c filter=proc\n")

	before, known := a.Snapshot(), a.LedgerEntries()
	id := a.ProposeDiff("three walks", diff)
	e, raw := a.Verdict(id)
	if e.Verdict == ledger.VerdictError {
		t.Errorf("verdict error: %s", e.Detail)
	}
	if _, err := exec.LookPath("perf"); err == nil {
		a.MustHone("profile", "run", "c")
		for e := range a.LedgerEntries() {
			if strings.HasSuffix(e, " ") {
				known[e] = true
			}
		}
	}
	if ran, err := os.ReadFile(marker); err == nil {
		t.Errorf("planted programs ran:\n%s", ran)
	}
	a.Unchanged(before, known, id, raw)
}

// cached marks a case that goes for the pin's cached baseline: it must find
// one there, built by an earlier case of its arena, or it would prove
// nothing.
func cached(c attack) attack {
	return attack{c.name, func(t *testing.T, a *arena) {
		if entries, _ := filepath.Glob(filepath.Join(a.Repo, ".git", "hone", "build-cache", "*", "out", "prog")); len(entries) == 0 {
			t.Fatal("no cached baseline to go for: run this case after another of its arena")
		}
		c.run(t, a)
	}}
}

// runShards runs cases in shards, each in an arena of its own and the
// shards side by side (t.Parallel), so that one shard's builds and gates
// overlap another's (benches still take the machine's turn one at a
// time). Every case checks the host through its own arena, whose
// repository, HOME, tag, listeners and ledger no other shard touches, so
// a snapshot sees only its own shard's doing. Within a shard the cases run
// in the order given, as they did in one arena: case i is in shard
// i % shards, so no shard starts with a case that needs an earlier one
// (cached).
func runShards(t *testing.T, uid, shards int, cases []attack) {
	for s := range shards {
		t.Run(strconv.Itoa(s), func(t *testing.T) {
			t.Parallel()
			a := newArena(t, uid)
			for i := s; i < len(cases); i += shards {
				c := cases[i]
				if !t.Run(c.name, func(t *testing.T) { a.T = t; c.run(t, a) }) {
					a.T = t
				}
			}
		})
	}
}

func TestCandidateAttacksAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("hone runs as root here; TestCandidateAttacksAsAnOrdinaryUser covers the rest")
	}
	t.Parallel()
	runShards(t, 0, 4, rootCases())
}

// The same attacks with hone as an ordinary user (nobody), where the jail
// runs as hone's own uid. One shard: an ordinary user's hone takes its
// bench turn through a lock in its own HOME, so two arenas of it would
// measure at the same time.
func TestCandidateAttacksAsAnOrdinaryUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to become an ordinary user")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	t.Parallel()
	runShards(t, 65534, 1, ordinaryUserCases)
}
