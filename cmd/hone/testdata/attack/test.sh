#!/bin/sh
# The unit gate: the program's self-test must pass.
exec "$HONE_OUT/prog" --selftest
