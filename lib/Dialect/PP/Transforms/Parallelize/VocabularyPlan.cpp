//===- VocabularyPlan.cpp - Megatron's vocabulary-parallel plan -----------===//
//
// Splits a training step's token embedding table and output head on the
// vocabulary, as Megatron-LM's VocabParallelEmbedding and vocabulary-
// parallel cross-entropy do; upstream propagation then keeps the logits
// split through the softmax's max and sum reductions.
//
//===----------------------------------------------------------------------===//

#include "SplitReach.h"
#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Parallelize/TensorParallelPlan.h"

using namespace mlir;
using namespace mlir::pp;

namespace {
/// The embedding: the op reading the table, the table, and its vocabulary
/// dimension.
struct Embedding {
  linalg::LinalgOp op;
  BlockArgument table;
  int64_t dim;
};
} // namespace

/// Whether `value` is an argument of `step` that is no weight (data).
static bool isData(Value value, func::FuncOp step) {
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && arg.getOwner()->getParentOp() == step.getOperation() &&
         !isParameter(step, arg.getArgNumber());
}

/// The embedding `op` is, if it reads one weight (rank 2) summed over one
/// of its dimensions and otherwise data arguments only.
static std::optional<Embedding> matchEmbedding(linalg::LinalgOp op,
                                               func::FuncOp step) {
  std::optional<Embedding> found;
  auto iterators = op.getIteratorTypesArray();
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value value = input->get();
    if (isData(value, step))
      continue;
    auto arg = dyn_cast<BlockArgument>(value);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (found || !arg || !type || type.getRank() != 2 ||
        arg.getOwner()->getParentOp() != step.getOperation())
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(input);
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (loop &&
          iterators[loop.getPosition()] == utils::IteratorType::reduction)
        found = Embedding{op, arg, int64_t(dim)};
    }
    if (!found)
      return std::nullopt;
  }
  return found;
}

/// Splits dimension `dim` of `weight`, read by `op`, unless the user split
/// it or the group size does not divide it (an error).
static LogicalResult splitWeight(func::FuncOp step, BlockArgument weight,
                                 int64_t dim, int64_t tensorParallel,
                                 Operation *op, TensorParallelPlan &plan) {
  unsigned number = weight.getArgNumber();
  if (step.getArgAttr(number, kSplitAttr) || plan.count(number))
    return success();
  int64_t size = cast<RankedTensorType>(weight.getType()).getDimSize(dim);
  if (tensorParallel > 1 && size % tensorParallel != 0)
    return op->emitError("the vocabulary-parallel plan splits dimension ")
           << dim << " of weight " << number << " (a vocabulary of " << size
           << ") over " << tensorParallel
           << " tensor-parallel processes, which does not divide it";
  Builder b(step.getContext());
  plan[number] = getSplitAttr(b, dim);
  return success();
}

LogicalResult pp::planVocabulary(func::FuncOp step, int64_t tensorParallel,
                                 TensorParallelPlan &plan) {
  std::optional<Embedding> embedding;
  SmallVector<WeightProduct> products;
  step.walk([&](linalg::LinalgOp op) {
    if (!embedding)
      embedding = matchEmbedding(op, step);
    if (auto product = matchWeightProduct(op, step))
      products.push_back(*product);
  });
  if (!embedding)
    return step.emitError("the vocabulary-parallel plan finds no embedding "
                          "table in '")
           << step.getSymName()
           << "' (a weight summed over one dimension against data only)";
  if (failed(splitWeight(step, embedding->table, embedding->dim, tensorParallel,
                         embedding->op, plan)))
    return failure();
  int64_t vocabulary = cast<RankedTensorType>(embedding->table.getType())
                           .getDimSize(embedding->dim);
  bool head = false;
  for (const WeightProduct &product : products) {
    if (product.op == embedding->op)
      continue;
    auto type = cast<RankedTensorType>(product.weight.getType());
    for (int64_t dim : product.outputDims) {
      if (type.getDimSize(dim) != vocabulary)
        continue;
      head = true;
      if (failed(splitWeight(step, product.weight, dim, tensorParallel,
                             product.op, plan)))
        return failure();
    }
  }
  // A first layer reading dense data looks like a table (an MLP's); only a
  // language model maps back to the vocabulary.
  if (!head)
    return step.emitError("the vocabulary-parallel plan finds no output head "
                          "in '")
           << step.getSymName() << "': no weight product yields the "
           << vocabulary << " entries of the table weight "
           << embedding->table.getArgNumber()
           << " read as an embedding, so the step has no vocabulary to split";
  return success();
}
