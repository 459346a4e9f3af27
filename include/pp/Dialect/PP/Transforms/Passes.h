//===- Passes.h - pp dialect transformation passes --------------*- C++ -*-===//
//
// Declares the passes of the pp dialect: the import, differentiation,
// schedule and tensor-parallel phases.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_PASSES_H
#define PP_DIALECT_PP_TRANSFORMS_PASSES_H

#include "pp/Dialect/PP/Transforms/Differentiate/Passes.h"
#include "pp/Dialect/PP/Transforms/Import/Passes.h"
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"

#endif // PP_DIALECT_PP_TRANSFORMS_PASSES_H
