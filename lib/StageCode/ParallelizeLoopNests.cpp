//===- ParallelizeLoopNests.cpp - large nests' parallel loops as scf.parallel //
//
// pp-parallelize-loop-nests: the outermost loop the vectorizers marked
// parallel in each nest that does enough work to repay a fork and join
// becomes an scf.parallel, for convert-scf-to-openmp.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/ParallelLoops.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPPARALLELIZELOOPNESTS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

/// The element operations `block` does per run: the lanes of each op's
/// widest vector (1 for a scalar op), times the trip counts of the loops
/// it holds; none where a loop's trip count is not constant.
std::optional<int64_t> getWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      std::optional<int64_t> body = getWork(*loop.getBody());
      if (!trips || !body)
        return std::nullopt;
      work += trips->getSExtValue() * *body;
      continue;
    }
    if (op.getNumRegions() > 0)
      return std::nullopt;
    int64_t lanes = 1;
    for (Type type :
         llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()))
      if (auto vector = dyn_cast<VectorType>(type))
        lanes = std::max(lanes, vector.getNumElements());
    work += lanes;
  }
  return work;
}

/// The same loop as an scf.parallel: `loop` carries no values, and its
/// iterations are independent.
void convertToParallel(RewriterBase &rewriter, scf::ForOp loop) {
  rewriter.setInsertionPoint(loop);
  auto parallel = scf::ParallelOp::create(
      rewriter, loop.getLoc(), ValueRange{loop.getLowerBound()},
      ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
  Block *body = parallel.getBody();
  rewriter.eraseOp(loop.getBody()->getTerminator());
  rewriter.inlineBlockBefore(loop.getBody(), body->getTerminator(),
                             parallel.getInductionVars());
  rewriter.eraseOp(loop);
}

struct ParallelizeLoopNests
    : pp::impl::PPParallelizeLoopNestsBase<ParallelizeLoopNests> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForOp> chosen;
    getOperation()->walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
      if (!loop->hasAttr(pp::kParallelLoopAttr) || !loop.getInitArgs().empty())
        return WalkResult::advance();
      std::optional<APInt> trips = loop.getStaticTripCount();
      if (!trips)
        return WalkResult::skip();
      // One iteration: the parallelism is inside.
      if (trips->getSExtValue() <= 1)
        return WalkResult::advance();
      std::optional<int64_t> body = getWork(*loop.getBody());
      if (body && trips->getSExtValue() * *body >= minWork)
        chosen.push_back(loop);
      // An inner marked loop of a nest too small here is smaller still.
      return WalkResult::skip();
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : chosen)
      convertToParallel(rewriter, loop);
    getOperation()->walk(
        [](scf::ForOp loop) { loop->removeAttr(pp::kParallelLoopAttr); });
  }
};

} // namespace
