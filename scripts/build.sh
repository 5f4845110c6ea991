#!/bin/sh
# build.sh: builds hone the way it ships, and its jail helper
# hone-jail-helper beside it. Usage: scripts/build.sh [OUTPUT] [go build flags...]
#
# CGO_ENABLED=0 makes a static binary. hone links net and os/user, which
# otherwise pull in cgo and so the dynamic loader and libc at every start:
# about 1 ms of the 4 ms a `hone version` takes. hone needs nothing from
# cgo: Go's own DNS resolver and /etc/passwd reader do the same work.
# -trimpath keeps build paths out of the binary; the version comes from git
# describe.
set -eu
cd "$(dirname "$0")/.."
out=${1:-hone}
[ $# -gt 0 ] && shift
# The hone_testmeter tag makes hone's test build, whose verdicts measure
# the work a run declares instead of time: never a release.
case " $* ${GOFLAGS:-} " in
*hone_testmeter*)
	echo "build.sh: the hone_testmeter tag builds hone for its own tests (verdicts not measured by the clock); a release never carries it" >&2
	exit 2
	;;
esac
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$version" -o "$out" "$@" ./cmd/hone
# The jail's helper beside it, where hone looks for it (see docs/jail.md).
CGO_ENABLED=0 exec go build -trimpath -o "$(dirname "$out")/hone-jail-helper" ./cmd/hone-jail-helper
