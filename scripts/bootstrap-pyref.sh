#!/usr/bin/env bash
# Sets up the Python reference that the Rust parity tests compare against (tests/reference/): a venv
# in .deps/pyref with mlx, its CPU backend mlx-cpu and mlx-lm, all at exact pins from
# tests/reference/requirements.txt (installed with --no-deps, so nothing floats).
#
# Idempotent: a stamp file holds a hash of the pins and the python; when it matches this is a fast
# no-op. Delete .deps/pyref to force a rebuild. Reuses .deps/dl/mlx_cpu-*.whl (fetched by
# scripts/bootstrap.sh, sha256-checked) when it is there.
#
# Prints the venv's python path on stdout when done, e.g.
#   PY=$(scripts/bootstrap-pyref.sh) && "$PY" tests/reference/mlx_reference.py --help
#
# Environment:
#   PYTHON   python to create the venv with (default python3; needs >= 3.11 and the venv module)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="$ROOT/.deps/pyref"
REQ="$ROOT/tests/reference/requirements.txt"
PY=${PYTHON:-python3}

MLX_VERSION=0.32.2
MLX_WHL="$ROOT/.deps/dl/mlx_cpu-${MLX_VERSION}-py3-none-manylinux_2_35_x86_64.whl"
MLX_WHL_SHA256=fc5d31b90fc4f457b2f9614ed45651a567d22a6a11a03d114a90a4e10bdd8878

say() { printf '\033[1mbootstrap-pyref:\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31mbootstrap-pyref: error:\033[0m %s\n' "$*" >&2; exit 1; }

[ -f "$REQ" ] || die "$REQ is missing"
command -v "$PY" >/dev/null || die "$PY not found (Debian: apt-get install -y python3 python3-venv)"
want=$( { "$PY" -c 'import sys; print(sys.version.split()[0])'; uname -sm; cat "$REQ"; } | sha256sum | cut -d' ' -f1)
stamp="$VENV/.laya-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  echo "$VENV/bin/python"
  exit 0
fi

"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "$PY is $("$PY" -c 'import sys; print(sys.version.split()[0])'); the pinned numpy needs Python >= 3.11 (set PYTHON=...)"
"$PY" -m venv --help >/dev/null 2>&1 && "$PY" -c 'import ensurepip' 2>/dev/null \
  || die "$PY cannot create venvs with pip (Debian: apt-get install -y python3-venv, or run scripts/bootstrap.sh)"

say "creating $VENV (mlx $MLX_VERSION, mlx-lm; pins from tests/reference/requirements.txt)"
rm -rf "$VENV"
"$PY" -m venv "$VENV" || die "could not create the venv $VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check --no-input "$@"; }

# The mlx-cpu wheel (~30 MB) is already in .deps/dl after scripts/bootstrap.sh: install it from there.
if [ "$(uname -s)" = Linux ] && [ -f "$MLX_WHL" ]; then
  got=$(sha256sum "$MLX_WHL" | cut -d' ' -f1)
  [ "$got" = "$MLX_WHL_SHA256" ] || die "checksum mismatch for $MLX_WHL (expected $MLX_WHL_SHA256, got $got); delete it and run scripts/bootstrap.sh"
  pip install --quiet --no-deps "$MLX_WHL" || die "could not install $MLX_WHL"
fi
# Everything pinned, transitive dependencies included, so --no-deps installs exactly this set.
pip install --quiet --no-deps --only-binary=:all: -r "$REQ" \
  || die "could not install the pins of $REQ from PyPI (is the package index reachable? is this Python $("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])') supported by those wheels?)"
pip check >/dev/null || die "the installed set is inconsistent: $(pip check 2>&1 | head -5)"
"$VENV/bin/python" -c 'import mlx.core as mx, mlx_lm, tokenizers; mx.eval(mx.ones(2) + 1)' \
  || die "mlx/mlx-lm were installed but do not import or run (see the error above)"
echo "$want" >"$stamp"
say "ready: $VENV"
echo "$VENV/bin/python"
