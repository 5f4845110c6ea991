#!/usr/bin/env bash
# Runs the HTML report's rendering test in headless Chromium. Installs Debian's
# chromium package first when it is missing (without it the test fails, and
# go test -short skips it).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "chromium-test.sh: chromium is not installed and we are not root; run: sudo apt-get install -y chromium" >&2
		exit 1
	fi
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi

go test ./report/ -run 'TestChromium' -count=1 -v "$@"
