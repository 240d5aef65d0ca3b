# The checksum check the set-up scripts share (sourced from the repository root; the caller
# defines `die MESSAGE`, which prints the message under its own name and exits).
check_sha256() { # FILE SHA256
  local got
  if command -v sha256sum >/dev/null; then got=$(sha256sum "$1" | cut -d' ' -f1); else got=$(shasum -a 256 "$1" | cut -d' ' -f1); fi
  [ "$got" = "$2" ] || die "checksum mismatch for $1: expected $2, got $got. Delete the file and run again."
}
