#!/usr/bin/env bash
# Builds pp's libFuzzer targets with clang-22, AddressSanitizer and
# UndefinedBehaviorSanitizer into ./build-sanitize and runs each for SECONDS
# (default 60) on its corpus: scripts/fuzz.sh [SECONDS]. Fails on any
# crash, hang, leak or sanitizer report; a failing input is left as
# build-sanitize/tools/pp-fuzzers/crash-* (or timeout-*, leak-*).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DLLVM_USE_LINKER=lld -DPP_ENABLE_FUZZERS=ON \
  -DPP_SANITIZE=address,undefined -DPP_FUZZ_SECONDS="$seconds" \
  "${launcher[@]}" >/dev/null
fuzzers=$(sed -n 's/^add_pp_fuzzer(\(.*\)$/\1/p' tools/pp-fuzzers/CMakeLists.txt)
ninja -C build-sanitize -j "$(nproc)" $fuzzers
ctest --test-dir build-sanitize -L fuzz --output-on-failure
