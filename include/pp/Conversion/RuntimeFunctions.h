//===- RuntimeFunctions.h - the libpprt entry points the lowering calls -*-===//
//
// Every pprt_* function that convert-pp-to-runtime and
// convert-gemm-to-runtime call, each declared once with its C signature
// (runtime/include/pprt/pprt.h), in the manner of upstream's
// FunctionCallBuilder: a call whose operands do not match its declaration is
// a bug of the pass that builds it.
//
//===----------------------------------------------------------------------===//

#ifndef PP_CONVERSION_RUNTIMEFUNCTIONS_H
#define PP_CONVERSION_RUNTIMEFUNCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::pp {

/// A libpprt entry point and its C signature, declared in the module on
/// first use.
struct RuntimeFunction {
  StringRef name;
  FunctionType type;

  /// The declaration in `module`, added at its end if missing; fails, with
  /// an error at the declaration, if the module declares it with another
  /// type.
  FailureOr<func::FuncOp> declare(ModuleOp module) const;
  /// A call of the function with `args`, declaring it on first use in the
  /// module whose table `symbols` is. Build the table once per pass: a
  /// lookup in the module itself scans the module, and a pass makes
  /// thousands of calls.
  func::CallOp create(OpBuilder &b, Location loc, SymbolTable &symbols,
                      ValueRange args) const;
};

/// The table of runtime functions.
struct RuntimeFunctions {
  explicit RuntimeFunctions(MLIRContext *context);

  // The program a schedule lowers to (convert-pp-to-runtime).
  RuntimeFunction setProgram, setDataParallel, setWeightVersions, setStageZero,
      defineBuffer, setIdBound, setIdIgnored, setPackedInput, defineSaved,
      setBufferVariant, setMicrobatchVariant, setPlanMicrobatchVariant,
      setStepPlans, stepPlan, setSlices, setPacking;
  RuntimeFunction buffer, paramAcquire, paramRelease, send, recv, groupBegin,
      groupEnd, accumulate, recordLoss, updateState, allReduce, reduceScatter,
      allGather, optimizerStep, actionBegin, actionEnd;
  RuntimeFunction stepIsFirst, stepIsLast, setStepOffset;
  // The library GEMM of marked contractions (convert-gemm-to-runtime).
  RuntimeFunction gemm;
  // The seed of a random op in stage code (convert-pp-to-runtime).
  RuntimeFunction randomSeed;
  // Tensor parallelism: the program's groups and split weights
  // (convert-pp-to-runtime), and the collectives of partitioned stage code
  // (convert-shard-to-runtime).
  RuntimeFunction setTensorParallel, setBufferSplit;
  RuntimeFunction tpAllReduce, tpAllGather, tpIndex;
};

} // namespace mlir::pp

#endif // PP_CONVERSION_RUNTIMEFUNCTIONS_H
