//===- Passes.h - pp import passes ------------------------------*- C++ -*-===//
//
// Declares the passes that prepare a model's training step before it is cut
// into stages, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_IMPORT_PASSES_H
#define PP_DIALECT_PP_TRANSFORMS_IMPORT_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "pp/Dialect/PP/IR/PPDialect.h"

namespace mlir {
namespace pp {

#define GEN_PASS_DECL
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"

} // namespace pp
} // namespace mlir

#endif // PP_DIALECT_PP_TRANSFORMS_IMPORT_PASSES_H
