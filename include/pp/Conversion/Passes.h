//===- Passes.h - pp conversion passes --------------------------*- C++ -*-===//
//
// Declares the conversions out of the pp dialect.
//
//===----------------------------------------------------------------------===//

#ifndef PP_CONVERSION_PASSES_H
#define PP_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "pp/StageCode/GemmLayout.h"

namespace mlir {
namespace pp {

#define GEN_PASS_DECL
#include "pp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pp/Conversion/Passes.h.inc"

} // namespace pp
} // namespace mlir

#endif // PP_CONVERSION_PASSES_H
