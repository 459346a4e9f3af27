//===- TensorParallelPlan.cpp - Megatron's column/row plan ----------------===//
//
// Groups a training step's weight products as Megatron-LM does: the
// column-parallel products whose split outputs stay split up to one
// row-parallel product that sums them away (an MLP's two layers, or an
// attention block's Q, K and V projections split by heads and its output
// projection), so that one all-reduce follows each group.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Parallelize/TensorParallelPlan.h"
#include "SplitReach.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::pp;

namespace {
/// A way to split a column product: its weight's dimension and where the
/// split goes.
struct ColumnSplit {
  int64_t dim;
  SplitReach reach;
};
} // namespace

/// Fails, with an error at `at`, where `tensorParallel` does not divide
/// dimension `dim` of `weight`.
static LogicalResult checkDivides(BlockArgument weight, int64_t dim,
                                  int64_t tensorParallel, Operation *at,
                                  Operation *partner) {
  int64_t size = cast<RankedTensorType>(weight.getType()).getDimSize(dim);
  if (tensorParallel <= 1 || size % tensorParallel == 0)
    return success();
  InFlightDiagnostic diag =
      at->emitError("Megatron's plan splits dimension ")
      << dim << " of weight " << weight.getArgNumber() << " (size " << size
      << ": attention heads or hidden features) over " << tensorParallel
      << " tensor-parallel processes, which does not divide it";
  diag.attachNote(partner->getLoc()) << "the product paired with it";
  return diag;
}

/// The split of `column` that leads to `row`'s dimension `rowDim`.
static const ColumnSplit *findSplit(ArrayRef<ColumnSplit> splits,
                                    Operation *row, int64_t rowDim) {
  for (const ColumnSplit &split : splits)
    if (split.reach.row == row && split.reach.rowDim == rowDim)
      return &split;
  return nullptr;
}

FailureOr<TensorParallelPlan> pp::planMegatron(func::FuncOp step,
                                               int64_t tensorParallel) {
  SmallVector<WeightProduct> products;
  step.walk([&](linalg::LinalgOp op) {
    if (auto product = matchWeightProduct(op, step))
      products.push_back(*product);
  });
  SmallVector<SmallVector<ColumnSplit>> splits(products.size());
  for (auto [product, options] : llvm::zip(products, splits))
    for (int64_t dim : product.outputDims)
      if (auto reach = reachOfSplit(product, dim, step))
        options.push_back({dim, *reach});

  Builder b(step.getContext());
  TensorParallelPlan plan;
  llvm::SmallPtrSet<Operation *, 16> assigned;
  auto annotated = [&](BlockArgument weight) {
    return bool(step.getArgAttr(weight.getArgNumber(), kSplitAttr));
  };
  for (size_t i = 0; i < products.size(); ++i) {
    if (assigned.contains(products[i].op) || splits[i].empty())
      continue;
    const SplitReach &first = splits[i].front().reach;
    Operation *row = first.row;
    // The columns reaching `row`, and a row dimension they all reach.
    SmallVector<size_t> group;
    for (size_t j = i; j < products.size(); ++j)
      if (!assigned.contains(products[j].op) &&
          llvm::any_of(splits[j], [&](const ColumnSplit &split) {
            return split.reach.row == row;
          }))
        group.push_back(j);
    std::optional<int64_t> rowDim;
    for (const ColumnSplit &option : splits[i])
      if (option.reach.row == row && llvm::all_of(group, [&](size_t j) {
            return findSplit(splits[j], row, option.reach.rowDim);
          })) {
        rowDim = option.reach.rowDim;
        break;
      }
    bool userSplit = annotated(first.rowWeight) || assigned.contains(row) ||
                     llvm::any_of(group, [&](size_t j) {
                       return annotated(products[j].weight) ||
                              products[j].weight == first.rowWeight;
                     });
    if (!rowDim || userSplit)
      continue;
    for (size_t j : group) {
      const ColumnSplit &split = *findSplit(splits[j], row, *rowDim);
      if (linalg::IndexOp index = split.reach.index) {
        InFlightDiagnostic diag =
            index.emitOpError("reads loop dimension ")
            << index.getDim()
            << ", which splitting the weight column-parallel splits: "
               "upstream partitioning would leave the index local";
        diag.attachNote(products[j].op.getLoc()) << "the product by the weight";
        return diag;
      }
      if (failed(checkDivides(products[j].weight, split.dim, tensorParallel,
                              products[j].op, row)))
        return failure();
      plan[products[j].weight.getArgNumber()] = getSplitAttr(b, split.dim);
      for (auto [bias, dim] : split.reach.biases)
        if (!annotated(bias))
          plan[bias.getArgNumber()] = getSplitAttr(b, dim);
      assigned.insert(products[j].op);
    }
    if (failed(checkDivides(first.rowWeight, *rowDim, tensorParallel, row,
                            products[i].op)))
      return failure();
    plan[first.rowWeight.getArgNumber()] = getSplitAttr(b, *rowDim);
    assigned.insert(row);
  }
  return plan;
}
