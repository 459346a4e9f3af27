//===- Passes.h - passes over the code of pipeline stages -------*- C++ -*-===//
//
// Declares the stage-code passes (tiling, vectorization, GEMM layout,
// scratch) and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_PASSES_H
#define PP_STAGECODE_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "pp/StageCode/GemmLayout.h"

namespace mlir {
namespace pp {

#define GEN_PASS_DECL
#include "pp/StageCode/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pp/StageCode/Passes.h.inc"

} // namespace pp
} // namespace mlir

#endif // PP_STAGECODE_PASSES_H
