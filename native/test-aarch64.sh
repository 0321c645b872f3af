#!/bin/sh
# The Rust tests of every crate, cross-built for aarch64 and run under qemu-user
# (docs/native.md, "Other CPUs: aarch64").  Exits with cargo's status: 0 only if
# every test passed.  Extra arguments go to cargo test (e.g. -p modforge-rsa).
#
# Needs the Rust target (rustup target add aarch64-unknown-linux-gnu), a cross
# linker and C library (Debian: gcc-aarch64-linux-gnu libc6-dev-arm64-cross) and
# qemu-aarch64 (Debian: qemu-user).  AARCH64_LINKER and AARCH64_SYSROOT override
# the linker and the directory qemu loads the target's libraries from.
set -eu
cd "$(dirname "$0")"
TARGET=aarch64-unknown-linux-gnu
LINKER=${AARCH64_LINKER:-aarch64-linux-gnu-gcc}
SYSROOT=${AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}

missing=""
rustup target list --installed 2>/dev/null | grep -qx "$TARGET" || missing="$missing; the Rust target (rustup target add $TARGET)"
command -v "$LINKER" >/dev/null 2>&1 || missing="$missing; the linker $LINKER (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
command -v qemu-aarch64 >/dev/null 2>&1 || missing="$missing; qemu-aarch64 (apt-get install qemu-user)"
[ -d "$SYSROOT" ] || missing="$missing; the target's C library in $SYSROOT (libc6-dev-arm64-cross)"
if [ -n "$missing" ]; then
    echo "test-aarch64: missing${missing#;}" | sed 's/missing /missing: /' >&2
    exit 2
fi

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="$LINKER"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $SYSROOT"
# --show-output: the lines of the kernel tests skipped on this CPU (every x86 backend is, here).
exec cargo test --workspace --release --target "$TARGET" "$@" -- --show-output
