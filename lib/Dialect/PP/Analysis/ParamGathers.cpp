//===- ParamGathers.cpp - ZeRO-3's weights gathered per param -------------===//
//
// The params a stage function reads and the span of its body, from the
// first op that reads each to the last, over which the runtime holds it
// whole; the peak is the largest sum of the spans that overlap.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ParamGathers.h"
#include "pp/Dialect/PP/Analysis/StaticMemory.h"
#include "pp/Dialect/PP/IR/PPDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pp;

/// Whether `op`'s results may share the memory of its operands once
/// bufferized: views, and the reshapes and slices that become them.
static bool makesView(Operation *op) {
  return isa<ViewLikeOpInterface, tensor::CollapseShapeOp,
             tensor::ExpandShapeOp, tensor::ExtractSliceOp, tensor::CastOp,
             tensor::ReshapeOp>(op);
}

/// The indices, in `body`'s block, of the first and last op that reads
/// `param` or a view of it; none if nothing does.
static std::optional<std::pair<int64_t, int64_t>>
getReadSpan(Value param, Block &body,
            const llvm::DenseMap<Operation *, int64_t> &position) {
  std::optional<std::pair<int64_t, int64_t>> span;
  SmallVector<Value> worklist = {param};
  llvm::DenseSet<Value> seen = {param};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      Operation *holder = body.findAncestorOpInBlock(*user);
      if (!holder)
        continue;
      int64_t at = position.lookup(holder);
      span = span ? std::pair{std::min(span->first, at),
                              std::max(span->second, at)}
                  : std::pair{at, at};
      if (!makesView(user))
        continue;
      for (Value result : user->getResults())
        if (seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return span;
}

FunctionGathers mlir::pp::getFunctionGathers(func::FuncOp func) {
  FunctionGathers gathers;
  // A body of several blocks holds its params from entry to return; a
  // declaration, all of them throughout.
  bool oneBlock = !func.isExternal() && func.getBody().hasOneBlock();
  Block empty;
  Block &entry = func.isExternal() ? empty : func.getBody().front();
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [index, op] : llvm::enumerate(entry))
    position[&op] = index;
  // Bytes starting (+) and ending (-) at each position of the block.
  SmallVector<int64_t> delta(entry.getOperations().size() + 2, 0);
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto slot = func.getArgAttrOfType<SlotAttr>(i, kSlotAttr);
    if (!slot || slot.getKind() != SlotKind::Param)
      continue;
    std::optional<WeightBuffer> buffer =
        getWeightBuffer(func.getArgumentTypes()[i]);
    std::optional<std::pair<int64_t, int64_t>> span =
        getReadSpan(func.getArgument(i), entry, position);
    if (!buffer || (!span && oneBlock))
      continue;
    if (!span || !oneBlock)
      span = {0, static_cast<int64_t>(delta.size()) - 3};
    int64_t bytes = buffer->numel * buffer->elementBytes;
    gathers.reads.push_back({slot.getIndex(), bytes});
    delta[span->first] += bytes;
    delta[span->second + 1] -= bytes;
  }
  int64_t held = 0;
  for (int64_t change : delta) {
    held += change;
    gathers.peakBytes = std::max(gathers.peakBytes, held);
  }
  return gathers;
}

std::optional<SmallVector<int64_t>>
mlir::pp::getRankGatherPeaks(ScheduleOp schedule) {
  SmallVector<int64_t> peaks(schedule.getNumRanks(), 0);
  llvm::DenseMap<Operation *, int64_t> functionPeak;
  ArrayRef<int64_t> stageRank = schedule.getStageRank();
  WalkResult result = schedule.walk([&](ComputeOp compute) {
    func::FuncOp func = lookupComputeFunction(compute);
    if (!func)
      return WalkResult::interrupt();
    if (schedule.getZeroGatherUnit(compute.getStage()) != ZeroGather::Param)
      return WalkResult::advance();
    auto [it, inserted] = functionPeak.try_emplace(func, 0);
    if (inserted)
      it->second = getFunctionGathers(func).peakBytes;
    int64_t &peak = peaks[stageRank[compute.getStage()]];
    peak = std::max(peak, it->second);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  return peaks;
}
