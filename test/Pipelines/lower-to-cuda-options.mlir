// pp-lower-to-cuda checks its options before building: an empty chip
// crashed upstream's NVVM target verifier (a segmentation fault in
// NVVMTargetAttr::verifyTarget), and kernel-opt-level=2^63-1 was reported
// as "Invalid optimization level: -1."
// RUN: not pp-opt %s --pp-lower-to-cuda="chip=" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not pp-opt %s --pp-lower-to-cuda="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: not pp-opt %s --pp-lower-to-cuda="kernel-opt-level=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=LEVEL
// EMPTY: pp-lower-to-cuda: chip '' is not an NVIDIA GPU architecture such as sm_90 or sm_90a
// OTHER: pp-lower-to-cuda: chip 'gfx90a' is not an NVIDIA GPU architecture such as sm_90 or sm_90a
// LEVEL: pp-lower-to-cuda: kernel-opt-level must be 0, 1, 2 or 3, got 9223372036854775807

module {
}
