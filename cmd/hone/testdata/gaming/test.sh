#!/bin/sh
# The unit gate: the program's self-test must pass. It is slow, as real
# test suites are: a bench run starts more than a second after the build.
sleep 1.2
exec "$HONE_OUT/prog" --selftest
