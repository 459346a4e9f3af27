//===- PPDialect.h - pp dialect declaration ---------------------*- C++ -*-===//
//
// Declares the pp dialect and its attributes.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPDIALECT_H
#define PP_DIALECT_PP_IR_PPDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "pp/Dialect/PP/IR/PPOpsDialect.h.inc"

#include "pp/Dialect/PP/IR/PPEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "pp/Dialect/PP/IR/PPAttrs.h.inc"

#endif // PP_DIALECT_PP_IR_PPDIALECT_H
