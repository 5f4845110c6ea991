#!/usr/bin/env bash
# ci-deps.sh: make sure the tools hone's tests drive for real are installed:
# git, a C compiler (cc), perf, valgrind, bubblewrap (bwrap, the jail every
# patch's commands run in), chromium (the HTML report's rendering test),
# groff (the man pages' check), make, CMake and Meson (hone init's sample
# projects are built with them), c++ and Google Benchmark's headers (the
# google-benchmark harness tests), and, when running as root, that the
# unprivileged hone-jail user the jail runs as exists. A no-op when all are
# present. Missing ones are installed with apt-get on Debian/Ubuntu when
# running as root, or through sudo for an ordinary user who has it;
# otherwise it names the command to run and fails, because the tests would
# silently skip instead. It also installs staticcheck, at
# the version .ci/run expects, through the Go module proxy.
set -euo pipefail

# staticcheck 2026.2.2 (module v0.8.2, @latest on the proxy when this was
# written) reads Go 1.26 code; pinned so CI runs the checks it was clean under.
# The proxy knows it by its module version only.
staticcheck_version=2026.2.2
staticcheck_module=v0.8.2
staticcheck() {
	local bin
	bin="$(go env GOPATH)/bin/staticcheck"
	if [ -x "$bin" ] && "$bin" -version 2>/dev/null | grep -q "staticcheck $staticcheck_version "; then
		return 0
	fi
	echo "ci-deps.sh: installing staticcheck $staticcheck_version" >&2
	GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_module"
}

jail_user() {
	[ "$(id -u)" -eq 0 ] || return 0
	id -u hone-jail >/dev/null 2>&1 && return 0
	echo "ci-deps.sh: creating the jail user hone-jail" >&2
	useradd --system --user-group --no-create-home --shell /usr/sbin/nologin hone-jail
}

# perf record needs kernel.perf_event_paranoid at 2 or below to sample a
# user's own processes; Debian's kernels default to 3, which stops it.
perf_paranoid() {
	local f=/proc/sys/kernel/perf_event_paranoid
	[ -r "$f" ] || return 0
	[ "$(cat "$f")" -le 2 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "ci-deps.sh: kernel.perf_event_paranoid is $(cat "$f"), which stops perf record; run: sudo bash scripts/ci-deps.sh" >&2
		return 1
	fi
	echo "ci-deps.sh: setting kernel.perf_event_paranoid=2 (was $(cat "$f")) so perf can sample" >&2
	echo 2 >"$f"
}

declare -A pkg=([git]=git [cc]=gcc [c++]=g++ [perf]=linux-perf [valgrind]=valgrind [bwrap]=bubblewrap [chromium]=chromium [groff]=groff-base [make]=make [cmake]=cmake [meson]=meson [ninja]=ninja-build)
missing=()
for tool in git cc c++ perf valgrind bwrap chromium groff make cmake meson ninja; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("${pkg[$tool]}")
done
[ -f /usr/include/benchmark/benchmark.h ] || missing+=(libbenchmark-dev)

# An ordinary user's run hands what needs root to a second run of this
# script through sudo (HONE_CI_DEPS_ROOT=1). Go and staticcheck are the
# user's own, installed before that: sudo's secure_path seldom holds Go,
# and root's GOPATH is not the user's.
if [ "${HONE_CI_DEPS_ROOT:-}" != 1 ]; then
	if ! command -v go >/dev/null 2>&1; then
		echo "ci-deps.sh: go is not installed; install Go (see go.mod for the version) first" >&2
		exit 1
	fi
	staticcheck
fi

paranoid=/proc/sys/kernel/perf_event_paranoid
if [ "$(id -u)" -ne 0 ] && { [ ${#missing[@]} -gt 0 ] || { [ -r $paranoid ] && [ "$(cat $paranoid)" -gt 2 ]; }; }; then
	if command -v sudo >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
		echo "ci-deps.sh: ${missing[*]:+missing packages: ${missing[*]}; }running the steps that need root with sudo" >&2
		exec sudo env HONE_CI_DEPS_ROOT=1 bash "$0"
	fi
	[ ${#missing[@]} -eq 0 ] || echo "ci-deps.sh: missing packages: ${missing[*]}; run: sudo bash scripts/ci-deps.sh (or apt-get install them yourself)" >&2
	perf_paranoid
	exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "ci-deps.sh: missing packages: ${missing[*]}; install them with your package manager" >&2
		exit 1
	fi
	echo "ci-deps.sh: installing ${missing[*]}" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
jail_user
perf_paranoid
