#!/usr/bin/env bash
# `make demo`: what Laya does, on the default model, with the latency of each decision.
set -euo pipefail
LAYA=${1:-target/release/laya}
step() { printf '\n\033[1m$ laya %s\033[0m\n' "$*"; "$LAYA" "$@"; }
step doctor
step complete "The capital of France is"
step complete "I would like to thank you for your "
step complete "It was a bright cold day in Apr"
step check "I will recieve teh letter tomorow, and than we will see if its right."
step rank --context "I would like to thank you for your" help banana support patience
printf '\nEach command loads the model once; `laya serve` keeps it resident (see README.md).\n'
