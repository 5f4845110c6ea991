#!/bin/sh
# The unit gate: dropping the last of 1..10 leaves 2..10, which sum to 54.
out=$("$HONE_OUT/prog" 10)
[ "$out" = 54 ] || { echo "test.sh: expected 54, got $out"; exit 1; }
echo "ok"
