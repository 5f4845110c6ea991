package layout

import (
	"bytes"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// cargoManifest is what init reads of a Cargo.toml.
type cargoManifest struct {
	Package *struct {
		Name string `toml:"name"`
	} `toml:"package"`
	Bin []struct {
		Name string `toml:"name"`
	} `toml:"bin"`
	Bench []struct {
		Name    string `toml:"name"`
		Harness *bool  `toml:"harness"`
	} `toml:"bench"`
	Dependencies    map[string]toml.Primitive `toml:"dependencies"`
	DevDependencies map[string]toml.Primitive `toml:"dev-dependencies"`
}

// timedHarnesses are bench frameworks that choose their iteration counts
// from elapsed time: a faster candidate runs more iterations in the same
// time, so timing their whole process cannot show a speedup.
var timedHarnesses = []string{"criterion", "divan"}

func detectCargo(p *project, l *Layout) {
	var m cargoManifest
	if _, err := toml.Decode(string(p.read(p.file)), &m); err != nil {
		l.Todo = append(l.Todo, "fix "+p.file+": it does not parse as TOML")
	}
	if m.Package != nil {
		l.Name = m.Package.Name
	}
	p.needCargo()
	p.need("cc")
	env := append(p.env(), "CARGO_TARGET_DIR=$HONE_OUT/target")
	// --locked: a committed Cargo.lock is part of the checkout, which the
	// build must leave as it found it.
	lock := p.cargoLock()
	flags := "--offline"
	if lock != "" {
		flags = "--locked --offline"
	}
	steps := []string{"cargo build --release " + flags, "cargo test --no-run " + flags}
	bins := p.cargoBins(&m)
	harness := ""
	if len(bins) == 0 {
		harness = p.cargoHarness(&m, l)
	}
	if harness != "" {
		steps = append(steps, `cp "$(cargo bench --no-run `+flags+` --bench `+harness+` --message-format=json | sed -n '/"kind":\["bench"\]/s/.*"executable":"\([^"]*\)".*/\1/p')" $HONE_OUT/`+harness+`-bench`)
	}
	why := []string{
		"Build with the target directory in $HONE_OUT (CARGO_TARGET_DIR), and build",
		"the tests now: $HONE_OUT is read-only for the gates. --offline: the jail has",
		"no network, so every crate must be vendored (cargo vendor) or have none.",
	}
	if harness != "" {
		why = append(why, "The bench harness "+harness+" is copied to a fixed name: cargo appends a hash.")
	}
	l.Build = &Command{Run: script(env, steps...), Why: why}
	l.Gates = append(l.Gates, &Gate{Name: "unit", Run: script(append(p.env(), "CARGO_TARGET_DIR=/tmp/target"),
		"mkdir -p /tmp/target",
		"cp -a $HONE_OUT/target/debug /tmp/target/",
		"cargo test "+flags), Why: []string{
		"The crate's tests, built by the build command. cargo writes into its",
		"target directory even when nothing changed, so it gets a copy in /tmp.",
	}})
	switch {
	case len(bins) > 0:
		withProgram(l, "$HONE_OUT/target/release/"+bins[0])
	case harness != "":
		l.Bench = &Bench{Run: "$HONE_OUT/" + harness + "-bench", Why: []string{
			"The crate's bench harness (harness = false), timed as one process: it",
			"must do a fixed amount of work, or a faster candidate would not show.",
			"It can make its input from the verdict's seed, in $HONE_SEED.",
		}}
	}
	p.cargoDeps(l, lock)
	p.protect(l, "Cargo.toml", "build.rs", ".cargo/**", "rust-toolchain", "rust-toolchain.toml", "vendor/**")
	if lock == join(p.dir, "Cargo.lock") {
		p.protect(l, "Cargo.lock")
	}
	if sub, ok := p.inPath("src"); ok {
		l.Files = p.sourceGlobs(join(p.dir, "src"), sub, ".rs")
	}
	l.Sanitize = []string{"address"}
	l.Notes = append(l.Notes, "Unit tests inside src/*.rs are part of the sources a patch may change;", "tests in tests/ are not.")
}

// needCargo finds the toolchain's own cargo: rustup's proxy in ~/.cargo/bin
// needs RUSTUP_HOME and a writable home, which the jail does not have, so
// commands reach the toolchain that `rustup which` names for this project
// (honouring its rust-toolchain file) directly.
func (p *project) needCargo() {
	c, err := exec.LookPath("cargo")
	if err != nil {
		p.missing = appendNew(p.missing, "cargo")
		return
	}
	real, err := filepath.EvalSymlinks(c)
	if err != nil {
		real = c
	}
	if filepath.Base(real) == "rustup" {
		out, err := ask(p.host(p.dir), real, "which", "cargo")
		if err != nil || !filepath.IsAbs(out) {
			p.notes = append(p.notes, "find the Rust toolchain to build with: `rustup which cargo` failed here; put its bin directory on PATH in the commands and its toolchain directory in [sandbox] read_only")
			return
		}
		real = out
	}
	p.reach(filepath.Dir(real), installDir(real))
}

// cargoBins lists the crate's binaries, the one named like the package first.
func (p *project) cargoBins(m *cargoManifest) []string {
	var bins []string
	for _, b := range m.Bin {
		bins = appendNew(bins, b.Name)
	}
	pkg := ""
	if m.Package != nil {
		pkg = m.Package.Name
	}
	if isFile(p.host(join(p.dir, "src/main.rs"))) && pkg != "" {
		bins = appendNew(bins, pkg)
	}
	for _, f := range p.filesMatching(join(p.dir, "src/bin"), "*.rs") {
		bins = appendNew(bins, strings.TrimSuffix(f, ".rs"))
	}
	var ok []string
	for _, b := range bins {
		if shellSafe(b) {
			ok = append(ok, b)
		}
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i] == pkg && ok[j] != pkg })
	return ok
}

// cargoHarness returns a bench target that does a fixed amount of work
// (harness = false, no timed framework), or "" with a note in l.Todo
// when the benches cannot be timed whole.
func (p *project) cargoHarness(m *cargoManifest, l *Layout) string {
	timed := ""
	for _, h := range timedHarnesses {
		if _, ok := m.DevDependencies[h]; ok {
			timed = h
		}
	}
	for _, b := range m.Bench {
		if b.Harness != nil && !*b.Harness && timed == "" && shellSafe(b.Name) {
			return b.Name
		}
	}
	if len(m.Bench) > 0 || isDir(p.host(join(p.dir, "benches"))) {
		why := "libtest's #[bench]"
		if timed != "" {
			why = timed
		}
		l.benchTodo = true
		l.Todo = append(l.Todo, "write the bench marked FILL IN in hone.toml: the benches use "+why+", which chooses its iteration counts from elapsed time, so timing the whole process would not show a speedup; add a [[bench]] with harness = false that does a fixed amount of work, or a program")
	}
	return ""
}

// cargoLock is the Cargo.lock the crate builds with, in its directory or,
// for a workspace member, above it; "" when there is none.
func (p *project) cargoLock() string {
	for d := p.dir; ; d = path.Dir(d) {
		if f := join(d, "Cargo.lock"); isFile(p.host(f)) {
			return f
		}
		if d == "." {
			return ""
		}
	}
}

// cargoDeps says what the user must do when the crate has dependencies the
// jail cannot download.
func (p *project) cargoDeps(l *Layout, lockFile string) {
	lock := p.read(lockFile)
	if lockFile == "" || len(lock) == 0 {
		l.Todo = append(l.Todo, "commit a Cargo.lock (cargo generate-lockfile) so that baseline and candidate build the same dependencies")
		return
	}
	external := bytes.Contains(lock, []byte(`source = "registry+`)) || bytes.Contains(lock, []byte(`source = "sparse+`)) || bytes.Contains(lock, []byte(`source = "git+`))
	if !external {
		return
	}
	for d := p.dir; ; d = path.Dir(d) {
		for _, f := range []string{".cargo/config.toml", ".cargo/config"} {
			if bytes.Contains(p.read(join(d, f)), []byte("vendored-sources")) {
				return
			}
		}
		if d == "." {
			break
		}
	}
	l.Todo = append(l.Todo, "vendor the crate's dependencies: run `cargo vendor` in "+p.dir+" and commit vendor/ and the .cargo/config.toml it prints; the jail has no network and an empty CARGO_HOME")
}
