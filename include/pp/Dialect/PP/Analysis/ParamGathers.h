//===- ParamGathers.h - ZeRO-3's weights gathered per param -----*- C++ -*-===//
//
// Under ZeRO-3 gathered per param (`zero_gather = param`) a stage function
// gathers each param right before its first read and frees it after its
// last (convert-pp-to-runtime's pprt_param_acquire/release): the params it
// reads, and the most of their bytes whole at once, in closed form from
// the function's body.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_PARAMGATHERS_H
#define PP_DIALECT_PP_ANALYSIS_PARAMGATHERS_H

#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::pp {

/// A param a stage function reads: its index and whole bytes.
struct ParamRead {
  int64_t param;
  int64_t bytes;
};

/// What a stage function gathers when it runs: one all-gather per param it
/// reads, and the most bytes held at once (the largest set of params whose
/// first-to-last reads overlap at one op of the body).
struct FunctionGathers {
  SmallVector<ParamRead> reads;
  int64_t peakBytes = 0;
};

/// The gathers of `func`, a stage function whose params carry `param`
/// slots; a param read inside a region counts at the op of the body that
/// holds the read, and a view of a param (a reshape, a slice) reads it
/// where the view is read.
FunctionGathers getFunctionGathers(func::FuncOp func);

/// Per rank of `schedule`, the most weight bytes whole at once under
/// gathers per param: the largest peak of a stage function its computes
/// of stages gathered per param run (one at a time); none when a compute
/// names no function.
std::optional<SmallVector<int64_t>> getRankGatherPeaks(ScheduleOp schedule);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_PARAMGATHERS_H
