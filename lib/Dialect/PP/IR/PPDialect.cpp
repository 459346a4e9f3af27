//===- PPDialect.cpp - pp dialect registration ----------------------------===//
//
// Registers the pp dialect's ops and attributes.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pp;

#include "pp/Dialect/PP/IR/PPOpsDialect.cpp.inc"

#include "pp/Dialect/PP/IR/PPEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "pp/Dialect/PP/IR/PPAttrs.cpp.inc"

void PPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "pp/Dialect/PP/IR/PPOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "pp/Dialect/PP/IR/PPAttrs.cpp.inc"
      >();
}

CostAttr CostAttr::getUnit(MLIRContext *context, int64_t numStages) {
  Builder b(context);
  auto filled = [&](double value) {
    return b.getDenseF64ArrayAttr(SmallVector<double>(numStages, value));
  };
  return CostAttr::get(context, filled(1.0), filled(1.0), filled(1.0),
                       b.getF64FloatAttr(0.0), filled(1.0), filled(0.0));
}

LogicalResult CostAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               DenseF64ArrayAttr forward,
                               DenseF64ArrayAttr backwardInput,
                               DenseF64ArrayAttr backwardWeight, FloatAttr comm,
                               DenseF64ArrayAttr activation,
                               DenseF64ArrayAttr stash) {
  size_t stages = forward.size();
  for (DenseF64ArrayAttr field :
       {forward, backwardInput, backwardWeight, activation, stash}) {
    if (field.size() != stages)
      return emitError() << "cost arrays must all have one entry per stage";
    if (llvm::any_of(field.asArrayRef(), [](double v) { return v < 0; }))
      return emitError() << "costs must not be negative";
  }
  if (comm.getValueAsDouble() < 0)
    return emitError() << "costs must not be negative";
  for (size_t s = 0; s < stages; ++s)
    if (stash[s] > activation[s])
      return emitError()
             << "stage " << s << " stashes "
             << llvm::formatv("{0}", llvm::format("%g", stash[s])).str()
             << " for W but holds only "
             << llvm::formatv("{0}", llvm::format("%g", activation[s])).str();
  return success();
}
