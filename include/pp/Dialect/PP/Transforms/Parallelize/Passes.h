//===- Passes.h - pp tensor-parallel passes ---------------------*- C++ -*-===//
//
// Declares the passes that plan how weights split over a tensor-parallel
// group and partition the stage functions for it, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_PASSES_H
#define PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Scheduling/ScheduleOption.h"

namespace mlir {
namespace pp {

#define GEN_PASS_DECL
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h.inc"

} // namespace pp
} // namespace mlir

#endif // PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_PASSES_H
