//===- PPDialect.cpp - pp dialect registration ----------------------------===//
//
// Registers the pp dialect's ops and attributes.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pp;

#include "pp/Dialect/PP/IR/PPOpsDialect.cpp.inc"

/// Parses `[v, ...]` of f64 literals, decimal or hexadecimal.
static ParseResult parseExactF64Array(AsmParser &parser,
                                      DenseF64ArrayAttr &array) {
  SmallVector<double> values;
  auto parseElement = [&]() -> ParseResult {
    APFloat value(0.0);
    if (parser.parseFloat(llvm::APFloat::IEEEdouble(), value))
      return failure();
    values.push_back(value.convertToDouble());
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     parseElement))
    return failure();
  array = DenseF64ArrayAttr::get(parser.getContext(), values);
  return success();
}

/// Prints `[v, ...]` with every element in a form that parses back to the
/// same double.
static void printExactF64Array(AsmPrinter &printer, DenseF64ArrayAttr array) {
  printer << '[';
  llvm::interleaveComma(array.asArrayRef(), printer, [&](double value) {
    printer.printFloat(APFloat(value));
  });
  printer << ']';
}

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
  auto isFinite = [](double v) { return std::isfinite(v); };
  for (DenseF64ArrayAttr field :
       {forward, backwardInput, backwardWeight, activation, stash}) {
    if (field.size() != stages)
      return emitError() << "cost arrays must all have one entry per stage";
    if (!llvm::all_of(field.asArrayRef(), isFinite))
      return emitError() << "costs must be finite";
    if (llvm::any_of(field.asArrayRef(), [](double v) { return v < 0; }))
      return emitError() << "costs must not be negative";
    if (!llvm::all_of(field.asArrayRef(), isValidQuantity))
      return emitError() << "costs must be at most " << kMaxQuantityText;
  }
  if (!isFinite(comm.getValueAsDouble()))
    return emitError() << "costs must be finite";
  if (comm.getValueAsDouble() < 0)
    return emitError() << "costs must not be negative";
  if (!isValidQuantity(comm.getValueAsDouble()))
    return emitError() << "costs must be at most " << kMaxQuantityText;
  for (size_t s = 0; s < stages; ++s)
    if (stash[s] > activation[s])
      return emitError()
             << "stage " << s << " stashes "
             << llvm::formatv("{0}", llvm::format("%g", stash[s])).str()
             << " for W but holds only "
             << llvm::formatv("{0}", llvm::format("%g", activation[s])).str();
  return success();
}
