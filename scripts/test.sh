#!/usr/bin/env bash
# test.sh: the second of a newcomer's two commands, and what .ci/run calls.
# Installs what the tests drive (scripts/ci-deps.sh: as root, or through
# sudo), then runs the whole suite. Extra arguments go to go test (-short).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ci-deps.sh
# go test's default limit is 10 minutes per package binary; an end-to-end
# package of real verdicts on a shared 2-core machine under load can pass
# that while every decision in it is right, so the limit is 30 minutes
# (a later -timeout in the arguments wins).
# Four packages and four tests of a package at once, not go test's default
# of one per core: the end-to-end tests spend most of their time waiting,
# for the machine's bench turn (one verdict measures at a time) or for a
# jail, and others' builds and gates fill that wait.
exec go test -timeout 30m -p 4 -parallel 4 "$@" ./...
