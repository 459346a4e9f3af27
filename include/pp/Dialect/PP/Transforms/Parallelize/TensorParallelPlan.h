//===- TensorParallelPlan.h - how weights split over a TP group -*- C++ -*-===//
//
// Plans of tensor parallelism on a training step: which weights split on
// which dimension, as `pp.split` values; pp-plan-tensor-parallel sets them.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORPARALLELPLAN_H
#define PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORPARALLELPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::pp {

/// The `pp.split` of each weight (a training-step argument number) a plan
/// splits.
using TensorParallelPlan = llvm::MapVector<unsigned, ArrayAttr>;

/// Megatron's plan. A product of an activation by a weight of the step
/// (rank >= 2) is column-parallel when splitting one of the weight's output
/// dimensions keeps the product's result split, through ops that only
/// carry it in parallel loops, up to one other weight product that sums
/// over it: the row-parallel product, whose weight splits on the dimension
/// summed. All the columns that reach one row form a group (an MLP's first
/// layer; an attention block's Q, K and V projections, split by heads, for
/// its output projection), split so that they agree on the row's
/// dimension; 1-D weights read along the split on the way (biases) split
/// with it. A group with a weight the user already split is skipped. Fails
/// with an error at the `linalg.index` and a note at the product where the
/// split reaches an op that reads its own index there, and, when
/// `tensorParallel` > 1, with an error at a product whose planned split
/// dimension it does not divide.
FailureOr<TensorParallelPlan> planMegatron(func::FuncOp step,
                                           int64_t tensorParallel);

/// Megatron's vocabulary-parallel embedding and head, added to `plan`. The
/// embedding table is the weight an op sums, over one of its dimensions
/// (the vocabulary), against data arguments of the step only (one-hot
/// tokens, or ids compared with the loop's index); it splits on that
/// dimension. Every other weight product with an output dimension of the
/// vocabulary's size (the head, whose logits the cross-entropy reduces)
/// splits on it. Weights the user split are left alone. Fails with an
/// error at the step where it has no embedding table, and at an op whose
/// vocabulary `tensorParallel` (> 1) does not divide.
LogicalResult planVocabulary(func::FuncOp step, int64_t tensorParallel,
                             TensorParallelPlan &plan);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORPARALLELPLAN_H
