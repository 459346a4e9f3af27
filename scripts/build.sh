#!/usr/bin/env bash
# Configures and builds pp into ./build (Ninja, lld, ccache when present):
# everything, or only the Ninja targets given (bash scripts/build.sh pp-compile).
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The Python package (python/) builds for setup.sh's venv where there is one.
python=()
venv=${PP_PYTHON_VENV:-$HOME/.cache/pp-python-venv}
[ -x "$venv/bin/python" ] && python=(-DPython_EXECUTABLE="$venv/bin/python")
# clang-22, where setup.sh installed it, compiles pp's MLIR code about a
# quarter faster than Debian's gcc 12 (LLVM's flags follow the C++ compiler,
# so C and C++ both).
compilers=()
command -v clang++-22 >/dev/null &&
  compilers=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22)
# A build directory configured with another compiler is configured afresh:
# CMake would drop the other options below when it resets the cache.
if [ ${#compilers[@]} -gt 0 ] && [ -f build/CMakeCache.txt ] &&
  ! grep -q '^CMAKE_CXX_COMPILER:.*clang++-22$' build/CMakeCache.txt; then
  rm -rf build/CMakeCache.txt build/CMakeFiles
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${compilers[@]}" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DLLVM_USE_LINKER=lld "${launcher[@]}" "${python[@]}"
ninja -C build -j "$(nproc)" "$@"
