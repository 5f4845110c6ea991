#!/bin/sh
# go-cache-figures.sh: what Go builds cost in hone's jail, where the build
# cache a build reads is hone's trusted one (filled by the pin's builds
# only, read-only to the jail), against go build outside any jail.
#
#   scripts/go-cache-figures.sh [HONE]
#
# Prints the wall time of: a cold build (empty trusted cache: the pin's
# first build), a trusted-warm build (a candidate that changes its own
# package, everything else from the trusted cache), and for reference go
# build outside the jail with an empty and with a warm GOCACHE. Needs go,
# git and jq.
set -eu
hone=${1:-hone}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=hone GIT_AUTHOR_EMAIL=hone@invalid GIT_COMMITTER_NAME=hone GIT_COMMITTER_EMAIL=hone@invalid
cd "$work"
git init -q -b main .
mkdir -p targets/g
# A small module with one dependency (hone's own TOML parser) and the
# standard library's fmt: what the 23 s cold build of the issue was.
cat > targets/g/go.mod <<'MOD'
module example.com/g

go 1.24

require github.com/BurntSushi/toml v1.6.0
MOD
grep '^github.com/BurntSushi/toml v1.6.0' "$here/go.sum" > targets/g/go.sum
cat > targets/g/main.go <<'GO'
package main

import (
	"fmt"

	"github.com/BurntSushi/toml"
)

const answer = 1

func main() {
	var v struct{ A int }
	toml.Decode("A = 1", &v)
	fmt.Println(v.A * answer)
}
GO
cat > hone.toml <<'TOML'
[bench]
pairs = 3
max_pairs = 3

[targets.g]
build = "go build -o $HONE_OUT/prog ."
  [targets.g.bench]
  run = "$HONE_OUT/prog"
TOML
git add -A
git commit -q -m pin

propose() {
	sed "$1" targets/g/main.go > "$work/new" && cp "$work/new" targets/g/main.go
	git diff > "$work/patch.diff"
	git checkout -q -- .
	"$hone" patch propose g --hotspot main --class 1 --hypothesis "$1" --file "$work/patch.diff"
}

"$hone" verdict "$(propose 's/answer = 1/answer = 1 \/\/ one/')" --json > v1.json
"$hone" verdict "$(propose 's/answer = 1/answer = 1 \/\/ two/')" --json > v2.json
jq -r '"cold build (the pin, empty trusted cache): \(.gates[0].baseline.wall_seconds) s; trusted-warm candidate build: \(.gates[0].candidate.wall_seconds) s"' v1.json
jq -r '"second verdict: baseline from hone'"'"'s build cache: \(.gates[0].baseline.cached); trusted-warm candidate build: \(.gates[0].candidate.wall_seconds) s"' v2.json

cd targets/g
cold=$(mktemp -d)
start=$(date +%s.%N); GOCACHE=$cold GOFLAGS=-mod=readonly go build -o "$work/direct" .; end=$(date +%s.%N)
echo "outside the jail, empty GOCACHE: $(echo "$end - $start" | bc) s"
sed -i 's/answer = 1/answer = 1 \/\/ three/' main.go
start=$(date +%s.%N); GOCACHE=$cold GOFLAGS=-mod=readonly go build -o "$work/direct" .; end=$(date +%s.%N)
echo "outside the jail, warm GOCACHE, own package changed: $(echo "$end - $start" | bc) s"
chmod -R u+w "$cold"; rm -rf "$cold"
