package workspace

import (
	"fmt"
	"strings"
)

// InitialConfig is the commented hone.toml that `hone init` writes. With a
// target name it defines that target (path defaults to targets/<name>, pin to
// "HEAD"); without one the target table is a commented example to fill in.
func InitialConfig(target, path, pin string) []byte {
	if path == "" {
		path = "targets/" + target
	}
	if pin == "" {
		pin = "HEAD"
	}
	name := target
	if name == "" {
		name = "NAME"
	}
	t := fmt.Sprintf(`[targets.%[1]s]
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
# stdout and exit status, byte for byte.
# [[targets.%[1]s.gates]]
# name        = "golden"
# run         = "$HONE_OUT/prog $HONE_ROOT/corpora/input.txt"
# equivalence = true

# The workload that is measured. Keys of [bench] above may be overridden here.
# [targets.%[1]s.bench]
# run = "$HONE_OUT/prog $HONE_ROOT/corpora/input.txt"
`, name, path, pin)
	if target == "" {
		t = "# Define a target: uncomment and fill in this table.\n" + commentOut(t)
	}
	return []byte(`# hone.toml: the hone workspace file. Every key is documented in hone's README;
# an unknown key is an error. Commands run in hone's jail through sh -c in
# /hone/src/<path>, with HONE_ROOT (the checkout's top level, /hone/src),
# HONE_OUT (the build output folder, /hone/out; read-only after the build)
# and HONE_TARGET set. Each gate and bench run gets a private copy of the
# checkout, thrown away after it.

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
seed       = 1                    # seeds pair order and bootstrap: verdicts are reproducible

` + t)
}

func commentOut(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "#") {
			lines[i] = "# " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
