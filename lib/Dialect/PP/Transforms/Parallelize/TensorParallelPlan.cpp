//===- TensorParallelPlan.cpp - Megatron's column/row plan ----------------===//
//
// Finds a training step's weight products and pairs them column-parallel
// then row-parallel, as Megatron-LM's MLP does, so that the hidden values
// between the two stay split and one all-reduce follows the pair.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Parallelize/TensorParallelPlan.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/TrainingStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::pp;

namespace {
/// A product of an activation by a 2-D weight of the step.
struct WeightProduct {
  linalg::LinalgOp op;
  BlockArgument weight;
  /// The loop that indexes the weight's output features.
  unsigned outputLoop;
  /// The weight's dimension summed over (its input features) and the one
  /// that indexes the result (its output features).
  int64_t inputDim, outputDim;
};
} // namespace

/// The weight product `op` is, if it is one: a contraction with a 2-D
/// weight operand one of whose dimensions is a reduction loop and the
/// other a parallel loop of the result.
static std::optional<WeightProduct> matchWeightProduct(linalg::LinalgOp op,
                                                       func::FuncOp step) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2)
    return std::nullopt;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto weight = dyn_cast<BlockArgument>(input->get());
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!weight || weight.getOwner()->getParentOp() != step.getOperation() ||
        !isParameter(step, weight.getArgNumber()) || !type ||
        type.getRank() != 2)
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    auto iterators = op.getIteratorTypesArray();
    std::optional<int64_t> inputDim, outputDim;
    unsigned outputLoop = 0;
    for (int64_t d = 0; d < 2; ++d) {
      auto loop = dyn_cast<AffineDimExpr>(map.getResult(d));
      if (!loop)
        return std::nullopt;
      if (iterators[loop.getPosition()] == utils::IteratorType::reduction) {
        inputDim = d;
      } else {
        outputDim = d;
        outputLoop = loop.getPosition();
      }
    }
    if (inputDim && outputDim)
      return WeightProduct{op, weight, outputLoop, *inputDim, *outputDim};
  }
  return std::nullopt;
}

/// The `pp.split` of dimension `dim` (`[[], [0]]` for dimension 1).
static ArrayAttr splitOf(Builder &b, int64_t dim) {
  SmallVector<Attribute> dims(dim + 1, b.getI64ArrayAttr({}));
  dims[dim] = b.getI64ArrayAttr({0});
  return b.getArrayAttr(dims);
}

/// The 1-D weights broadcast and combined elementwise with `product`'s
/// result (its bias).
static SmallVector<BlockArgument> findBiases(WeightProduct product,
                                             func::FuncOp step) {
  SmallVector<BlockArgument> biases;
  for (Operation *user : product.op->getResult(0).getUsers()) {
    auto elementwise = dyn_cast<linalg::LinalgOp>(user);
    if (!elementwise || !linalg::isElementwise(elementwise))
      continue;
    for (Value operand : elementwise.getDpsInputs()) {
      auto broadcast = operand.getDefiningOp<linalg::BroadcastOp>();
      auto bias = broadcast ? dyn_cast<BlockArgument>(broadcast.getInput())
                            : BlockArgument();
      if (bias && bias.getOwner()->getParentOp() == step.getOperation() &&
          isParameter(step, bias.getArgNumber()) &&
          cast<RankedTensorType>(bias.getType()).getRank() == 1 &&
          broadcast.getDimensions() == ArrayRef<int64_t>{0})
        biases.push_back(bias);
    }
  }
  return biases;
}

/// Follows the split dimension of `column`'s result through the ops that
/// read it, up to `row`: fails where one reads the split loop with
/// `linalg.index`.
static LogicalResult checkIndexReads(WeightProduct column, Operation *row) {
  // The split result dimension: the one the weight's output loop indexes.
  SmallVector<std::pair<Value, int64_t>> work;
  OpResult product = column.op->getResult(0);
  AffineMap resultMap = column.op.getIndexingMapMatchingResult(product);
  for (auto [d, expr] : llvm::enumerate(resultMap.getResults()))
    if (expr == getAffineDimExpr(column.outputLoop, expr.getContext()))
      work.push_back({product, int64_t(d)});
  llvm::SetVector<Operation *> visited;
  while (!work.empty()) {
    auto [value, dim] = work.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!op || op == row || !visited.insert(op))
        continue;
      auto loop = dyn_cast<AffineDimExpr>(
          op.getMatchingIndexingMap(&use).getResult(dim));
      if (!loop)
        continue;
      for (auto index : op->getRegion(0).getOps<linalg::IndexOp>())
        if (index.getDim() == loop.getPosition()) {
          InFlightDiagnostic diag =
              index.emitOpError("reads loop dimension ")
              << index.getDim()
              << ", which splitting the weight column-parallel splits: "
                 "upstream partitioning would leave the index local";
          diag.attachNote(column.op.getLoc()) << "the product by the weight";
          return diag;
        }
      for (OpResult result : op->getResults()) {
        AffineMap map = op.getIndexingMapMatchingResult(result);
        for (auto [d, expr] : llvm::enumerate(map.getResults()))
          if (expr == getAffineDimExpr(loop.getPosition(), op.getContext()))
            work.push_back({result, int64_t(d)});
      }
    }
  }
  return success();
}

FailureOr<TensorParallelPlan> pp::planMegatron(func::FuncOp step) {
  SmallVector<WeightProduct> products;
  step.walk([&](linalg::LinalgOp op) {
    if (auto product = matchWeightProduct(op, step))
      products.push_back(*product);
  });
  Builder b(step.getContext());
  TensorParallelPlan plan;
  auto annotated = [&](BlockArgument weight) {
    return bool(step.getArgAttr(weight.getArgNumber(), kSplitAttr));
  };
  for (size_t i = 0; i + 1 < products.size(); i += 2) {
    const WeightProduct &column = products[i], &row = products[i + 1];
    if (annotated(column.weight) || annotated(row.weight) ||
        column.weight == row.weight)
      continue;
    if (failed(checkIndexReads(column, row.op)))
      return failure();
    plan[column.weight.getArgNumber()] = splitOf(b, column.outputDim);
    plan[row.weight.getArgNumber()] = splitOf(b, row.inputDim);
    for (BlockArgument bias : findBiases(column, step))
      if (!annotated(bias))
        plan[bias.getArgNumber()] = splitOf(b, 0);
  }
  return plan;
}
