#!/usr/bin/env bash
# What `make test` needs beyond the build: Neovim (Debian's, 0.7 or newer) for the real-editor
# test. Idempotent; installs with apt-get when missing (LAYA_SKIP_APT=1: only say what is missing).
set -euo pipefail
command -v nvim >/dev/null && exit 0
if [ "${LAYA_SKIP_APT:-}" = 1 ] || ! command -v apt-get >/dev/null; then
  echo "test-deps: Neovim is missing; install it (Debian/Ubuntu: apt-get install -y neovim)" >&2
  exit 1
fi
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
echo "test-deps: installing neovim" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq neovim >/dev/null
