//===- PPDialect.cpp - pp dialect registration ----------------------------===//
//
// Registers the pp dialect's ops and attributes.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

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
