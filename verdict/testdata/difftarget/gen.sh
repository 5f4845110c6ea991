#!/bin/sh
# One input made from the seed.
echo "$HONE_SEED"
