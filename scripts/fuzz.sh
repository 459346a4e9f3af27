#!/usr/bin/env bash
# Builds pp's libFuzzer targets with clang-22, AddressSanitizer and
# UndefinedBehaviorSanitizer into ./build-fuzz and runs each for SECONDS
# (default 60) on its corpus: scripts/fuzz.sh [SECONDS]. Fails on any
# crash, hang, leak or sanitizer report; a failing input is left as
# build-fuzz/tools/pp-fuzzers/crash-* (or timeout-*, leak-*).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DLLVM_USE_LINKER=lld -DPP_ENABLE_FUZZERS=ON \
  -DPP_SANITIZE=address,undefined -DPP_FUZZ_SECONDS="$seconds" \
  "${launcher[@]}" >/dev/null
ninja -C build-fuzz -j "$(nproc)" pp-schedule-json-fuzzer \
  pp-schedule-csv-fuzzer pp-cost-profile-fuzzer pp-device-file-fuzzer
ctest --test-dir build-fuzz -L fuzz --output-on-failure
