#!/bin/sh
# The golden gate: the output must be the recorded one.
"$HONE_OUT/prog" | cmp - testdata/expected
