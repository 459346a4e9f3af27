//===- Passes.h - pp dialect transformation passes --------------*- C++ -*-===//
//
// Declares the passes of the pp dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_PASSES_H
#define PP_DIALECT_PP_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/PPEnums.h"
#include "pp/Scheduling/PartitionPlanner.h"
#include "pp/Scheduling/ScheduleOption.h"

namespace mlir {
namespace pp {

#define GEN_PASS_DECL
#include "pp/Dialect/PP/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pp/Dialect/PP/Transforms/Passes.h.inc"

} // namespace pp
} // namespace mlir

#endif // PP_DIALECT_PP_TRANSFORMS_PASSES_H
