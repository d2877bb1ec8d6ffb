#!/usr/bin/env bash
# The virtual device: runs a command as a Snapdragon would, on the directory `lpai-net-run stage` wrote.
#
#   scripts/virtual-device.sh [--device_dir DIR] STAGED_DIR -- [NAME=VALUE...] COMMAND [ARGS...]
#   scripts/virtual-device.sh --sign FILE...
#
# STAGED_DIR appears at the device directory (DIR, default /data/local/tmp/LPAI, as stage's --device_dir), which is
# COMMAND's working directory; the environment is a fresh one, as `adb shell` gives, with the staged env.sh's
# LD_LIBRARY_PATH and ADSP_LIBRARY_PATH (what stage's run command sources), the LPAI_VD_* faults of the caller's
# environment, and the NAME=VALUE words before COMMAND, as a device shell reads them. The exit status is COMMAND's.
# The paths are mapped by proot (ptrace, no privileges) on a guest root of its own; qemu-aarch64 finds the aarch64
# glibc and the virtual device's libadsprpc.so (in /usr/lib, where the aarch64 Linux HLOS keeps it) in its sysroot;
# proot runs under lpai-vd-exec, whose seccomp filter turns the file calls Debian's proot does not translate into
# ones it does.
#
# The HLOS half is what stage put there (the shipped aarch64 lpai-net-run and liblpai_direct_stub.so) under
# qemu-aarch64. FastRPC is tests/virtual-device (test-only, never staged or shipped): each PD it opens is the PD
# shell under qemu-hexagon, loading the skel and libraries the DSP loader's search finds on ADSP_LIBRARY_PATH and
# serving their file calls from the device's file system. The PDs' log goes to $LPAI_VD_DSP_LOG (default
# target/virtual-device/dsp.log, appended).
#
# Faults the device can be told to have (environment): LPAI_VD_SIGNED_PD=1 (a PD refuses libraries without the test
# signature unless the run asks for an unsigned PD), LPAI_VD_RESTART_AFTER=N (the first PD dies at its N-th event:
# FastRPC invocations and apps_std file calls), LPAI_VD_LPAI_DOMAINS=adsp (the domains with an LPAI engine),
# LPAI_VD_SKEL_INTERFACE=MAJOR.MINOR (the version the skel answers the handshake with), LPAI_VD_STATIC_PDS=audio,...
# (the static PDs this process may attach to; by default none, as for an application on a device). LPAI_VD_RAW_LOG=1
# writes the PDs' log raw, as a device's log carries it (message records as lpai: lines, for lpai-net-run render-log).
#
# --sign adds the virtual device's test signature to each FILE (what elfsigner.py is for a device).
#
# It builds what it needs first (the PD shell, the aarch64 libadsprpc.so, the signing tool), quietly when built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() {
  echo "usage: scripts/virtual-device.sh [--device_dir DIR] STAGED_DIR -- [NAME=VALUE...] COMMAND [ARGS...]" >&2
  echo "       scripts/virtual-device.sh --sign FILE..." >&2
  exit 2
}
fail() { echo "virtual-device: $*" >&2; exit 2; }

# Builds quietly, in an environment of its own (a caller's cargo variables, a test's say, would make cargo rebuild):
# a failing build shows its output.
quietly() {
  local log
  log=$(mktemp)
  if ! (cd "$root" && env -i PATH="$PATH" HOME="$HOME" ${RUSTUP_HOME:+RUSTUP_HOME=$RUSTUP_HOME} \
    ${CARGO_HOME:+CARGO_HOME=$CARGO_HOME} RUSTUP_AUTO_INSTALL=0 "$@") >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    fail "building the virtual device failed: $*"
  fi
  rm -f "$log"
}

if [ "${1-}" = --sign ]; then
  shift
  [ $# -gt 0 ] || usage
  quietly cargo build -q --release -p lpai-virtual-device --bin lpai-vd-sign
  exec "$root/target/release/lpai-vd-sign" "$@"
fi

device_dir=/data/local/tmp/LPAI
case "${1-}" in
  --device_dir) [ $# -ge 2 ] || usage; device_dir=$2; shift 2 ;;
  --device_dir=*) device_dir=${1#--device_dir=}; shift ;;
esac
[ $# -ge 3 ] && [ "$2" = -- ] || usage
staged=$1
shift 2
case "$device_dir" in /?*) ;; *) fail "--device_dir $device_dir is not an absolute directory" ;; esac
[ -f "$staged/env.sh" ] || fail "$staged is not a directory lpai-net-run stage wrote (it has no env.sh)"
staged=$(cd "$staged" && pwd)
command -v proot >/dev/null || fail "proot is not installed (scripts/setup.sh installs it)"
command -v qemu-aarch64 >/dev/null || fail "qemu-aarch64 is not installed (scripts/setup.sh installs it)"

shell=$root/target/virtual-adsp/lpai-pd-shell
standin=$root/target/aarch64-unknown-linux-gnu/release/liblpai_vd_adsprpc.so
if [ ! -f "$shell" ]; then
  quietly bash scripts/build-hexagon.sh
fi
quietly cargo build -q --release --target aarch64-unknown-linux-gnu -p lpai-virtual-device --lib
quietly cargo build -q --release -p lpai-virtual-device --bin lpai-vd-exec

# The environment: fresh, then the staged env.sh, the faults, the command's own assignments.
environment=(PATH=/usr/bin:/bin HOME=/ TMPDIR=/tmp "LPAI_VD_PD_SHELL=$shell")
while IFS= read -r -d '' assignment; do environment+=("$assignment"); done < <(
  env -i bash -c '. "$1" && printf "LD_LIBRARY_PATH=%s\0ADSP_LIBRARY_PATH=%s\0" "${LD_LIBRARY_PATH-}" "${ADSP_LIBRARY_PATH-}"' \
    env.sh "$staged/env.sh")
log=${LPAI_VD_DSP_LOG:-$root/target/virtual-device/dsp.log}
mkdir -p "$(dirname "$log")"
environment+=("LPAI_VD_DSP_LOG=$log")
for fault in LPAI_VD_SIGNED_PD LPAI_VD_RESTART_AFTER LPAI_VD_LPAI_DOMAINS LPAI_VD_SKEL_INTERFACE LPAI_VD_STATIC_PDS \
  LPAI_VD_RAW_LOG; do
  if [ -n "${!fault+set}" ]; then environment+=("$fault=${!fault}"); fi
done
while [ $# -gt 0 ] && [[ "$1" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
  environment+=("$1")
  shift
done
[ $# -gt 0 ] || usage
printf '== %s: %s\n' "$(date -u +%FT%TZ)" "$*" >>"$log"

# The guest's root is a directory of its own: every top-level entry of this machine's root bound (or, for a
# symbolic link, copied), and the device directory's parents made in it, so that proot needs no "glue" (which, run
# as root, it would make as real directories in this machine's root, where concurrent runs would remove each
# other's). Removed when the command ends.
guest=$(mktemp -d "${TMPDIR:-/tmp}/lpai-virtual-device.XXXXXX")
trap 'rm -rf "$guest"' EXIT
binds=()
top=${device_dir#/}
top=/${top%%/*}
for entry in /* /.[!.]*; do
  [ -e "$entry" ] || [ -L "$entry" ] || continue
  [ "$entry" = "$top" ] && continue
  if [ -L "$entry" ]; then
    cp -P "$entry" "$guest$entry"
  elif [ -d "$entry" ]; then
    mkdir "$guest$entry"
    binds+=(-b "$entry")
  else
    : >"$guest$entry"
    binds+=(-b "$entry")
  fi
done
mkdir -p "$guest$device_dir"
# The HLOS's system libraries, as qemu-aarch64 sees them (-L): this machine's aarch64 glibc, and the virtual
# device's libadsprpc.so in /usr/lib, where the aarch64 Linux HLOS keeps it.
mkdir -p "$guest/vd-sysroot/usr/lib"
ln -s /usr/aarch64-linux-gnu/lib "$guest/vd-sysroot/lib"
ln -s "$standin" "$guest/vd-sysroot/usr/lib/libadsprpc.so"
status=0
env -i "${environment[@]}" "$root/target/release/lpai-vd-exec" proot -r "$guest" "${binds[@]}" -b "$staged:$device_dir" \
  -w "$device_dir" -q "qemu-aarch64 -L /vd-sysroot" "$@" || status=$?
exit "$status"
