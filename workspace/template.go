package workspace

import (
	"fmt"
	"strings"

	"github.com/hone-perf/hone/workspace/layout"
)

// InitialConfig is the commented hone.toml that `hone init` writes. With a
// layout it defines the target l found, named target when that is set;
// without one, a target name gives a target to fill in (path defaults to
// targets/<name>), and no name leaves the target table a commented example.
// pin defaults to "HEAD".
func InitialConfig(target, path, pin string, l *layout.Layout) []byte {
	return initialConfig(target, path, pin, l, nil)
}

// initialConfig is InitialConfig with the bench's outputs init found in
// the benchmarks (nil for none).
func initialConfig(target, path, pin string, l *layout.Layout, outputs *reviewedOutputs) []byte {
	if pin == "" {
		pin = "HEAD"
	}
	var b strings.Builder
	b.WriteString(header)
	if l != nil {
		if target == "" {
			target = l.Name
		}
		writeLayout(&b, target, pin, l, outputs)
		return []byte(b.String())
	}
	b.WriteString(sandboxExample)
	if path == "" {
		path = "targets/" + target
	}
	name := target
	if name == "" {
		name = "NAME"
	}
	t := fmt.Sprintf(genericTarget, name, path, pin)
	if target == "" {
		t = "# Define a target: uncomment and fill in this table.\n" + commentOut(t)
	}
	b.WriteString(t)
	return []byte(b.String())
}

const header = `# hone.toml: the hone workspace file. Every key is documented in hone's docs/hone-toml.md;
# an unknown key is an error. Commands run through sh -c in /hone/src/<path>
# with HONE_ROOT (the checkout's top level, /hone/src), HONE_OUT (the build
# output folder, /hone/out) and HONE_TARGET set.
#
# They run in a jail that sees /usr, /bin, /lib*, a few files of /etc, the
# paths in [sandbox] read_only, the checkout and $HONE_OUT, with a fresh HOME
# and /tmp for every run and no network. The build may write the checkout
# and $HONE_OUT; gates and bench runs get a private copy of the built
# checkout, thrown away afterwards, and $HONE_OUT read-only.
#
# Each verdict draws a fresh seed, the same for baseline and candidate, and
# passes it to equivalence gates and the bench as {seed} in the command and
# HONE_SEED in the environment. Make inputs from it, so that no patch can
# carry answers computed in advance for a fixed input. (It is not [bench]
# order_seed below, which fixes the pair order and the bootstrap.)

[ledger]
branch    = "hone/ledger"        # the dedicated branch holding every attempt
notes_ref = "refs/notes/hone"    # verdicts as notes on patch commits

[bench]                           # defaults for every target
metric     = "cpu-time"           # instructions | cpu-time | wall
pairs      = 10                   # interleaved baseline/candidate pairs per batch
max_pairs  = 30                   # keep adding batches until decided or this many
warmup     = 1                    # warm-up pairs, discarded
threshold  = 0.02                 # accept only if the speedup CI lower bound >= 1 + threshold
confidence = 0.95                 # confidence level of that interval
order_seed = 1                    # seeds pair order and bootstrap: verdicts are reproducible

`

const sandboxExample = `# A toolchain outside /usr (rustup's, a Go in your home) must be readable in
# the jail: list its directory here.
# [sandbox]
# read_only = ["/opt/toolchain"]

`

const genericTarget = `[targets.%[1]s]
path    = %[2]q      # the allowlist root: patches may only touch files below it
pin     = %[3]q      # branch, tag or commit the target is optimized from
protect = []         # patterns relative to path that are never patchable, e.g. ["testdata/**", "**/*_test.go"]
# files = ["*.c", "*.h"]  # optional: only these may change, new files included (globs relative to path; "dir/**" for a directory)
build   = ""         # shell command run in /hone/src/<path>; put binaries in $HONE_OUT

# Gates run before any benchmark; every gate must pass. Add as many as needed.
# [[targets.%[1]s.gates]]
# name    = "unit"
# run     = "make test"
# timeout = "10m"
#
# An equivalence gate runs on baseline and candidate and requires the same
# stdout and exit status, byte for byte. Give it an input made from the seed.
# [[targets.%[1]s.gates]]
# name        = "golden"
# run         = "$HONE_OUT/prog --seed {seed}"
# equivalence = true

# The workload that is measured, on an input made from the seed. Keys of
# [bench] above may be overridden here.
# [targets.%[1]s.bench]
# run = "$HONE_OUT/prog --seed {seed}"
`

func commentOut(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "#") {
			lines[i] = "# " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
