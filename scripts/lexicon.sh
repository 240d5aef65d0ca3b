#!/usr/bin/env bash
# Fetches the lexicon's sources (idempotently) and builds .deps/lexicon/en.tsv with scripts/lexicon.py.
# See data/README.md for what each source is and its licence. A second run is instant.
#
#   symspellpy 6.9.0 wheel (PyPI, sha256 pinned)  -> frequency_dictionary_en_82_765.txt (counts)
#   scowl 2020.12.07-2 (Debian, sha256 pinned)    -> SCOWL lists (case, extra words); /usr/share/dict/scowl if installed
#   python3.11-doc (Debian, any version)          -> cased corpus (case splits, contraction counts)
#   brotli 1.2.1 sdist (PyPI, sha256 pinned)      -> tests/testdata/alice29.txt, cased corpus too
#   @cspell/dict-* word lists (npm, sha512 pinned)  -> software, language and company terms
#   codespell 2.4.3 wheel (PyPI, sha256 pinned)   -> its misspellings are kept out of those terms
#
# Without apt-get (macOS) the Debian sources are skipped with a warning and the lexicon is
# SymSpell's lowercase list. Environment: PYTHON (default python3), LAYA_SKIP_APT=1.
# `scripts/lexicon.sh --force` rebuilds even when the stamp says it is up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LEX=.deps/lexicon
DL=$LEX/dl
SRC=$LEX/src

SYMSPELL_VERSION=6.9.0
SYMSPELL_WHL=symspellpy-${SYMSPELL_VERSION}-py3-none-any.whl
SYMSPELL_SHA256=b6dba96275fdbedc240491854160bbe596dda930f2d58567ad55faf82a4e4b43
SCOWL_VERSION=2020.12.07-2
SCOWL_DEB=scowl_${SCOWL_VERSION}_all.deb
SCOWL_SHA256=de692546df9b169f2cbdf4d8d88111a374733a9c382b820a6f943914ca705718
PYDOC_PKG=python3.11-doc
BROTLI_VERSION=1.2.1
BROTLI_SDIST=brotli-${BROTLI_VERSION}.tar.gz
BROTLI_SHA256=02b2f7b5a83485efe448a44ddf7983def05c3bb1dcf917d4f7154070260e13de

say() { printf 'lexicon: %s\n' "$*" >&2; }
die() { printf 'lexicon: error: %s\n' "$*" >&2; exit 1; }
# check_sha256 FILE SHA256
. scripts/sha256.sh
have_apt() { [ "${LAYA_SKIP_APT:-}" != 1 ] && command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; }
apt_download() { # PACKAGE[=VERSION] -> into $DL; one `apt-get update` retry when root
  (cd "$DL" && apt-get download -qq "$1" >/dev/null 2>&1) && return 0
  [ "$(id -u)" -eq 0 ] || return 1
  apt-get update -qq >/dev/null 2>&1 || true
  (cd "$DL" && apt-get download -qq "$1" >/dev/null 2>&1)
}
mkdir -p "$DL" "$SRC"
FETCHED=()

# --- SymSpell counts (required) ---------------------------------------------------------------------
SYMSPELL_TXT=$SRC/symspellpy-$SYMSPELL_VERSION/frequency_dictionary_en_82_765.txt
if [ ! -f "$SYMSPELL_TXT" ]; then
  if [ ! -f "$DL/$SYMSPELL_WHL" ]; then
    FETCHED+=("symspellpy $SYMSPELL_VERSION")
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: --ignore-requires-python \
      "symspellpy==$SYMSPELL_VERSION" -d "$DL" || die "could not download symspellpy==$SYMSPELL_VERSION from PyPI"
  fi
  check_sha256 "$DL/$SYMSPELL_WHL" "$SYMSPELL_SHA256"
  "$PY" - "$DL/$SYMSPELL_WHL" "$SRC/symspellpy-$SYMSPELL_VERSION" <<'EOF'
import sys, zipfile, os
whl, dest = sys.argv[1], sys.argv[2]
os.makedirs(dest, exist_ok=True)
with zipfile.ZipFile(whl) as z:
    for name in ("symspellpy/frequency_dictionary_en_82_765.txt", "symspellpy-6.9.0.dist-info/LICENSE"):
        with open(os.path.join(dest, os.path.basename(name)), "wb") as f:
            f.write(z.read(name))
EOF
fi

# --- SCOWL (Debian) ---------------------------------------------------------------------------------
SCOWL_DIR=""
if [ -f /usr/share/dict/scowl/english-words.10 ]; then
  SCOWL_DIR=/usr/share/dict/scowl
  SCOWL_TAG="scowl-installed-$(dpkg-query -W -f='${Version}' scowl 2>/dev/null || echo unknown)"
elif [ -f "$SRC/scowl/usr/share/dict/scowl/english-words.10" ]; then
  SCOWL_DIR=$SRC/scowl/usr/share/dict/scowl
  SCOWL_TAG="scowl-$(cat "$SRC/scowl/VERSION")"
elif have_apt; then
  FETCHED+=("scowl")
  if [ -f "$DL/$SCOWL_DEB" ] || apt_download "scowl=$SCOWL_VERSION"; then
    check_sha256 "$DL/$SCOWL_DEB" "$SCOWL_SHA256"
    ver=$SCOWL_VERSION
  elif apt_download scowl; then # another Debian release: same SCOWL lists, other packaging
    ver=$(ls "$DL"/scowl_*_all.deb | head -1 | sed 's/.*scowl_\(.*\)_all.deb/\1/')
    say "note: scowl $SCOWL_VERSION is not available here; using $ver (checksum not pinned)"
  else
    ver=""
    say "warning: could not download the Debian package scowl; the lexicon will be lowercase only"
  fi
  if [ -n "$ver" ]; then
    rm -rf "$SRC/scowl" && mkdir -p "$SRC/scowl"
    dpkg-deb -x "$DL/scowl_${ver}_all.deb" "$SRC/scowl"
    echo "$ver" >"$SRC/scowl/VERSION"
    SCOWL_DIR=$SRC/scowl/usr/share/dict/scowl
    SCOWL_TAG="scowl-$ver"
  fi
else
  say "warning: no apt-get: SCOWL is skipped, the lexicon will be lowercase only"
fi

# --- cased corpus: Python 3.11 documentation (Debian) -----------------------------------------------
PYDOC_DIR=""
PYDOC_TAG="pydoc-none"
if [ -f /usr/share/doc/python3.11/html/index.html ]; then
  PYDOC_DIR=/usr/share/doc/python3.11/html
  PYDOC_TAG="pydoc-installed-$(dpkg-query -W -f='${Version}' $PYDOC_PKG 2>/dev/null || echo unknown)"
elif [ -f "$SRC/pydoc/usr/share/doc/python3.11/html/index.html" ]; then
  PYDOC_DIR=$SRC/pydoc/usr/share/doc/python3.11/html
  PYDOC_TAG="pydoc-$(cat "$SRC/pydoc/VERSION")"
elif have_apt; then
  FETCHED+=("$PYDOC_PKG")
  if apt_download "$PYDOC_PKG"; then
    deb=$(ls -t "$DL"/${PYDOC_PKG}_*_all.deb | head -1)
    rm -rf "$SRC/pydoc" && mkdir -p "$SRC/pydoc"
    dpkg-deb -x "$deb" "$SRC/pydoc"
    rm -rf "$SRC/pydoc/usr/share/devhelp" # the same files again
    find "$SRC/pydoc" -type f ! -name '*.html' -delete # only the HTML pages are read
    basename "$deb" | sed "s/${PYDOC_PKG}_\(.*\)_all.deb/\1/" >"$SRC/pydoc/VERSION"
    rm -f "$deb"
    PYDOC_DIR=$SRC/pydoc/usr/share/doc/python3.11/html
    PYDOC_TAG="pydoc-$(cat "$SRC/pydoc/VERSION")"
  else
    say "warning: could not download $PYDOC_PKG; case splits fall back to heuristics"
  fi
fi

# --- cased corpus: Alice's Adventures in Wonderland (brotli's test data, PyPI) -----------------------
ALICE=$SRC/brotli-$BROTLI_VERSION/alice29.txt
if [ ! -f "$ALICE" ]; then
  if [ ! -f "$DL/$BROTLI_SDIST" ]; then
    FETCHED+=("brotli $BROTLI_VERSION")
    "$PY" -m pip download --quiet --no-deps --no-binary=:all: \
      "brotli==$BROTLI_VERSION" -d "$DL" 2>/dev/null || true
  fi
  if [ -f "$DL/$BROTLI_SDIST" ]; then
    check_sha256 "$DL/$BROTLI_SDIST" "$BROTLI_SHA256"
    "$PY" - "$DL/$BROTLI_SDIST" "$SRC/brotli-$BROTLI_VERSION" <<'EOF'
import sys, tarfile, os
sdist, dest = sys.argv[1], sys.argv[2]
os.makedirs(dest, exist_ok=True)
with tarfile.open(sdist) as t:
    for name in ("brotli-1.2.1/tests/testdata/alice29.txt", "brotli-1.2.1/LICENSE"):
        with open(os.path.join(dest, os.path.basename(name)), "wb") as f:
            f.write(t.extractfile(name).read())
EOF
  else
    say "warning: could not download the brotli sdist; the corpus lacks alice29.txt"
  fi
fi

# --- technical terms: CSpell's curated word lists (npm, MIT) -----------------------------------------
# Words a programmer's prose uses that no general dictionary has ("impl", "src", "unexported").
# NAME VERSION sha512-integrity, as the npm registry and tests/peers/package-lock.json give them.
TERMS_PKGS=(
  "software-terms 5.4.9 bB5L+OGW0F8Vt83j0XFcMEWCbCNqquLgjlQjm/iCp1jcYi/pQbqDLkXIPbINgbeG0vRqiu5yCPDFCsv4Qb6miQ=="
  "fullstack 3.2.9 diZX+usW5aZ4/b2T0QM/H/Wl9aNMbdODa1Jq0ReBr/jazmNeWjd+PyqeVgzd1joEaHY+SAnjrf/i9CwKd2ZtWQ=="
  "python 4.5.3 I226HEEJW4fleE0HMxRaecnzcJICFK6TOqIjqVkOJZzaVZTTjE7fojM+f5XECAwhf4BImW7HVOKMu4rMtza6ZA=="
  "rust 4.1.2 O1FHrumYcO+HZti3dHfBPUdnDFkI+nbYK3pxYmiM1sr+G0ebOd6qchmswS0Wsc6ZdEVNiPYJY/gZQR6jfW3uOg=="
  "golang 6.0.29 EZCgfxrr5lPnYQLmSvB6YtpfoDFt2KKxAD4ppq2xGSIgDFXAF7Mv4doiXIFUQaynCBIEfAMl3f/uDfrIUo4fyQ=="
  "companies 3.2.14 3EeCXEjd6ocbKNEHsPHViHJrDduJsVo9ixr0EMrzUO6OVCXlLSCLosDUzeANQidu/u6WA1ln63uRJ9fAGAKHzw=="
)
TERMS_DIRS=()
TERMS_TAG=""
for entry in "${TERMS_PKGS[@]}"; do
  read -r name ver integrity <<<"$entry"
  dest=$SRC/cspell-dict-$name-$ver
  if [ ! -f "$dest/LICENSE" ]; then
    tgz=$DL/cspell-dict-$name-$ver.tgz
    if [ ! -f "$tgz" ]; then
      command -v npm >/dev/null || { say "warning: no npm: technical word lists are skipped"; break; }
      FETCHED+=("@cspell/dict-$name $ver")
      (cd "$DL" && npm pack --silent "@cspell/dict-$name@$ver" >/dev/null 2>&1) ||
        { say "warning: could not fetch @cspell/dict-$name@$ver from npm; skipped"; continue; }
    fi
    got=$("$PY" -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tgz")
    [ "$got" = "$integrity" ] || die "checksum mismatch for $tgz: expected sha512-$integrity. Delete the file and run again."
    rm -rf "$dest" && mkdir -p "$dest"
    tar -xzf "$tgz" -C "$dest" --strip-components=1 package/dict package/LICENSE
  fi
  TERMS_DIRS+=("$dest/dict")
  TERMS_TAG="$TERMS_TAG $name-$ver"
done

# codespell's list of misspellings: a term list word it names as a misspelling is not added
# ("homogenous" is in the software terms; codespell says it is a slip of "homogeneous").
CODESPELL_VERSION=2.4.3
CODESPELL_WHL=codespell-${CODESPELL_VERSION}-py3-none-any.whl
CODESPELL_SHA256=af2505b335e8573dbd2d384d1c4ef498f4006f4ba2d6fceca01e55b91f52628a
CODESPELL_TXT=$SRC/codespell-$CODESPELL_VERSION/dictionary.txt
if [ ${#TERMS_DIRS[@]} -gt 0 ] && [ ! -f "$CODESPELL_TXT" ]; then
  if [ ! -f "$DL/$CODESPELL_WHL" ]; then
    FETCHED+=("codespell $CODESPELL_VERSION")
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: --ignore-requires-python \
      "codespell==$CODESPELL_VERSION" -d "$DL" || die "could not download codespell==$CODESPELL_VERSION from PyPI"
  fi
  check_sha256 "$DL/$CODESPELL_WHL" "$CODESPELL_SHA256"
  mkdir -p "$(dirname "$CODESPELL_TXT")"
  "$PY" -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("codespell_lib/data/dictionary.txt"))' \
    "$DL/$CODESPELL_WHL" "$CODESPELL_TXT"
fi

args=(--symspell "$SYMSPELL_TXT" --out "$LEX/en.tsv")
stamp="symspellpy-$SYMSPELL_VERSION"
[ -n "$SCOWL_DIR" ] && { args+=(--scowl "$SCOWL_DIR"); stamp="$stamp $SCOWL_TAG"; }
[ -n "$PYDOC_DIR" ] && { args+=(--corpus-html "$PYDOC_DIR"); stamp="$stamp $PYDOC_TAG"; }
[ -f "$ALICE" ] && { args+=(--corpus-text "$ALICE"); stamp="$stamp brotli-$BROTLI_VERSION"; }
if [ ${#TERMS_DIRS[@]} -gt 0 ]; then
  for d in "${TERMS_DIRS[@]}"; do args+=(--terms "$d"); done
  args+=(--misspellings "$CODESPELL_TXT")
  stamp="$stamp terms:$TERMS_TAG codespell-$CODESPELL_VERSION"
fi
[ "${1:-}" = --force ] && args+=(--force)
[ ${#FETCHED[@]} -gt 0 ] && args+=(--note "fetched $(IFS=,; echo "${FETCHED[*]}" | sed 's/,/, /g')")
exec "$PY" scripts/lexicon.py "${args[@]}" --stamp "$stamp"
