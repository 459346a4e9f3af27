#!/usr/bin/env bash
# Builds all of pp with clang-22, AddressSanitizer and
# UndefinedBehaviorSanitizer into ./build-sanitize and runs there the
# libFuzzer targets for FUZZ_SECONDS each (scripts/fuzz.sh, default 60),
# the lit tests, the runtime tests and an end-to-end oracle (the MLP
# against its unpipelined reference): scripts/sanitize.sh [FUZZ_SECONDS].
# Every sanitizer report goes to a file under build-sanitize/reports, also
# those of processes a test expects to fail; any report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fuzz.sh "${1:-60}"
# The prebuilt LLVM and MLIR libraries are not instrumented; their slab
# allocators do not unpoison what instrumented inline code poisoned, so
# manual poisoning is off (ASan still checks every access), also for the
# pp-opt runs that generate test models during the build.
ASAN_OPTIONS=allow_user_poisoning=0 ninja -C build-sanitize -j "$(nproc)"
reports=$PWD/build-sanitize/reports
rm -rf "$reports" && mkdir -p "$reports"
export ASAN_OPTIONS="allow_user_poisoning=0:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$reports/ubsan"
# UCX (under MPICH) patches mmap at load time, which crashes beside ASan's
# interceptors; MPI over shared memory does not need the hook.
export UCX_MEM_MMAP_HOOK_MODE=none
# What MPI's own libraries allocate and keep is not a leak of pp's.
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
# pprt.link_mpicc links by hand through the system mpicc (gcc), which
# cannot link a library that clang instrumented.
status=0
ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" \
  -R '^(lit|pprt\..*|e2e\.mlp-matches-reference)$' -E '^pprt\.link_mpicc$' ||
  status=$?
found=$(find "$reports" -type f | wc -l)
echo "sanitizer reports: $found"
for report in "$reports"/*; do
  [ -f "$report" ] && { echo "== $report"; head -40 "$report"; }
done
[ "$status" -eq 0 ] && [ "$found" -eq 0 ]
