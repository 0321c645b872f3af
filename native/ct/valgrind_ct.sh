#!/bin/sh
# Constant-time check of the RSA kernel under valgrind's memcheck.
#
# Runs the ignored unit test `ct_tests::ct_valgrind_target`, which marks the
# secret exponents and the message undefined (VALGRIND_MAKE_MEM_UNDEFINED)
# and computes both CRT halves.  Memcheck reports every conditional jump and
# every address that depends on them ("depends on uninitialised value").
#
#   1. the normal build must report none;
#   2. the build with the cargo feature `ct-leak-test` (a branch on the
#      exponent digit in the window loop) must report at least one;
#   3. the build with `ct-leak-index` (`ct_select` reading the entry at the
#      secret index instead of scanning them all) must report at least one.
#
# Memcheck words a secret branch "Conditional jump or move depends on
# uninitialised value(s)" and a secret address "Use of uninitialised value of
# size N"; both are counted.
#
# valgrind 3.19 does not emulate AVX-512, and its CPUID hides it, so under
# valgrind the kernel runs the portable fold twin (same loop, same digits)
# and the scalar Montgomery code; the IFMA instructions themselves are not
# traced.  Exit 0 when both checks hold.
set -eu
cd "$(dirname "$0")/.."
: "${CARGO_TARGET_DIR:=target/ct}"
export CARGO_TARGET_DIR
export CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_PROFILE_CI_TEST_DEBUG=line-tables-only

test_bin() {
    cargo test -p modforge-rsa --lib --no-run --message-format=json "$@" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("executable") and j.get("profile", {}).get("test"):
        print(j["executable"])'
}

run() {
    valgrind --error-exitcode=0 "$1" --ignored --exact ct_tests::ct_valgrind_target --test-threads=1 2>&1
}

SECRET_USE="depends on uninitialised|Use of uninitialised value"

# The normal build is the release profile's, as shipped (whole-program LTO
# decides what is inlined where).  The two deliberate leaks only show that the
# check sees a leak: they take the quicker ci-test profile (no LTO), which
# saves two fat-LTO builds of the ring's generated kernels (minutes each).
clean_bin=$(test_bin --release)
branch_bin=$(test_bin --profile ci-test --features ct-leak-test)
index_bin=$(test_bin --profile ci-test --features ct-leak-index)

out=$(run "$clean_bin")
echo "$out" | grep -q "test result: ok. 1 passed" || { echo "$out" | tail -20; echo "FAIL: the test did not run under valgrind" >&2; exit 1; }
clean=$(echo "$out" | grep -cE "$SECRET_USE" || true)
branch=$(run "$branch_bin" | grep -cE "$SECRET_USE" || true)
index=$(run "$index_bin" | grep -cE "$SECRET_USE" || true)
echo "secret-dependent branches and addresses reported: normal build $clean, ct-leak-test build $branch, ct-leak-index build $index"
if [ "$clean" -ne 0 ]; then
    echo "$out" | grep -EA8 "$SECRET_USE" | head -60
    echo "FAIL: the kernel branches on a secret or reads at a secret address" >&2
    exit 1
fi
if [ "$branch" -eq 0 ]; then
    echo "FAIL: the deliberate secret branch was not detected (the check is blind)" >&2
    exit 1
fi
if [ "$index" -eq 0 ]; then
    echo "FAIL: the deliberate secret-indexed read was not detected (the check is blind to addresses)" >&2
    exit 1
fi
echo "OK"
