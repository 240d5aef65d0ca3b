#!/usr/bin/env bash
# What `make test` needs beyond the build: the real editors of tests/lsp.rs — Neovim (Debian's,
# 0.7 or newer) and Emacs with eglot (Debian's emacs-nox and elpa-eglot) — and strace, which
# watches what files and sockets `laya serve` touches. Idempotent; installs
# with apt-get when missing (LAYA_SKIP_APT=1: only say what is missing).
set -euo pipefail
missing=()
command -v nvim >/dev/null || missing+=(neovim)
command -v emacs >/dev/null || missing+=(emacs-nox)
command -v strace >/dev/null || missing+=(strace)
ls -d /usr/share/emacs/site-lisp/elpa/eglot-* >/dev/null 2>&1 || missing+=(elpa-eglot)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "${LAYA_SKIP_APT:-}" = 1 ] || ! command -v apt-get >/dev/null; then
  echo "test-deps: missing ${missing[*]}; install them (Debian/Ubuntu: apt-get install -y ${missing[*]})" >&2
  exit 1
fi
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
echo "test-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
