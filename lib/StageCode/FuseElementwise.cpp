//===- FuseElementwise.cpp - elementwise fusion of stage code -------------===//
//
// pp-fuse-elementwise: fuses elementwise linalg ops on tensors into their
// only consumers with upstream linalg's elementwise fusion, restricted to
// fusions that compute every element of the producer exactly once,
// comparisons (masks) into the elementwise ops that broadcast them, and
// shared elementwise producers into their first elementwise consumer, which
// then also yields the producer's result.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPFUSEELEMENTWISE
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// Whether fusing the producer of `operand` into its consumer computes each
/// element of the producer once: the consumer is the producer's only user
/// (otherwise the producer stays for the others and the fused op computes
/// it again) and reads it through a permutation. Through any other map (a
/// broadcast, a contraction's input) the fused op revisits every producer
/// element along the consumer's other loops, recomputing it; and where the
/// producer reads its own init, upstream fusion keeps that init as an output
/// of the fused op, which every revisit then accumulates into again (the
/// doubled gradients of `%out + %g` fused into a matmul).
static bool computesProducerOnce(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  return producer && producer->hasOneUse() && consumer &&
         consumer.getMatchingIndexingMap(operand).isPermutation();
}

/// Whether the producer of `operand` is a mask worth recomputing in an
/// elementwise consumer that broadcasts it: one comparison into an `i1`
/// tensor that reads no init (a causal mask, `%c == 0`). Left apart, the
/// mask is stored as `i1`, which pp-vectorize-elementwise leaves scalar, and
/// the consumer (the masked fill, over batch and heads) with it; fused, the
/// consumer compares its own lanes, one comparison per element.
static bool isBroadcastMask(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!producer || !consumer || !producer->hasOneUse() ||
      producer.getNumDpsInits() != 1 ||
      !getElementTypeOrSelf(producer->getResult(0).getType()).isInteger(1) ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      !producer.getMatchingBlockArgument(producer.getDpsInitOperand(0))
           .use_empty())
    return false;
  Block *body = producer.getBlock();
  return llvm::hasSingleElement(body->without_terminator()) &&
         isa<arith::CmpFOp, arith::CmpIOp>(body->front());
}

/// Whether the producer of `operand` is an elementwise op whose result is
/// also used elsewhere (a value the forward saves for the backward: layer
/// norm's `x - mean` and normalized input, softmax's shifted scores) and
/// its consumer an elementwise op over the same loops that reads it through
/// a permutation and comes before every other user. Fused, the op computes
/// each producer element once, writes it as an extra result for the other
/// users and passes it on in registers: one pass over memory less. The
/// order keeps those users after the fused op, which takes the consumer's
/// place. A consumer that reads another result of the producer too is left
/// alone: upstream fusion then reads the producer's inputs through one map
/// for both, which is wrong where the fused operand's map transposes.
static bool sharesElementwiseProducer(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!producer || !consumer || producer->hasOneUse() ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      producer.getNumLoops() != consumer.getNumLoops() ||
      !consumer.getMatchingIndexingMap(operand).isPermutation() ||
      llvm::count_if(consumer->getOperands(), [&](Value value) {
        return value.getDefiningOp() == producer;
      }) != 1)
    return false;
  return llvm::all_of(producer->getUsers(), [&](Operation *user) {
    return user == consumer || (user->getBlock() == consumer->getBlock() &&
                                consumer->isBeforeInBlock(user));
  });
}

/// The fusions pp-fuse-elementwise makes.
static bool shouldFuse(OpOperand *operand) {
  return computesProducerOnce(operand) || isBroadcastMask(operand);
}

namespace {

/// Reads of an init that is a `linalg.fill` in a generic that writes every
/// element once (parallel loops, a permutation into the init) are the fill
/// value. Stage code's derivatives are such ops (`%out + %x` into zeros);
/// without this, fusion keeps their inits as extra outputs of the fused op.
struct ForwardFilledInit : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() ||
        op.getNumParallelLoops() != op.getNumLoops())
      return failure();
    bool changed = false;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      auto fill = init.get().getDefiningOp<linalg::FillOp>();
      BlockArgument arg = op.getMatchingBlockArgument(&init);
      if (!fill || arg.use_empty() ||
          !op.getMatchingIndexingMap(&init).isPermutation())
        continue;
      Value value = fill.getInputs().front();
      if (value.getType() != arg.getType())
        continue;
      rewriter.replaceAllUsesWith(arg, value);
      changed = true;
    }
    return success(changed);
  }
};

/// The value `arg` of `op`'s body stands for: an init that is a fill reads
/// the fill value.
static Value filledValue(linalg::GenericOp op, Value arg) {
  auto blockArg = dyn_cast<BlockArgument>(arg);
  if (!blockArg || blockArg.getOwner() != op.getBlock())
    return arg;
  OpOperand *operand = op.getMatchingOpOperand(blockArg);
  auto fill = operand->get().getDefiningOp<linalg::FillOp>();
  return fill && op.isDpsInit(operand) ? fill.getInputs().front() : arg;
}

/// The tensor `value` is a reshape of, through any number of reshapes.
static Value reshapeSource(Value value) {
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return value;
}

/// Whether `op` only adds its one input to zeros, elementwise: `%out + %g`
/// into a fill of zeros (or the fill value forwarded) through identities.
static bool addsInputToZeros(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      op->getResult(0).getType() != op.getDpsInputs().front().getType())
    return false;
  Block *body = op.getBlock();
  auto add = dyn_cast<arith::AddFOp>(body->front());
  if (!add || !llvm::hasSingleElement(body->without_terminator()) ||
      body->getTerminator()->getOperand(0) != add.getResult())
    return false;
  Value input = body->getArgument(0);
  if (add.getLhs() != input && add.getRhs() != input)
    return false;
  Value other = add.getLhs() == input ? add.getRhs() : add.getLhs();
  return matchPattern(filledValue(op, other), m_AnyZeroFloat());
}

/// A generic that only adds its one input to zeros (a derivative of one
/// term) is its input: a pass over memory less where `%g` comes through a
/// reshape and so is not fused into it. The sum differs from `%g` only
/// where `%g` is -0, which it makes +0.
struct DropZeroAccumulation : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!addsInputToZeros(op))
      return failure();
    // Only a computed gradient (seen through reshapes) takes the sum's
    // place: a function's argument or a constant returned as it is would
    // hand the caller a buffer that is not the result's own.
    Value term = op.getDpsInputs().front();
    if (!reshapeSource(term).getDefiningOp<linalg::LinalgOp>())
      return failure();
    rewriter.replaceOp(op, term);
    return success();
  }
};

/// Fuses a shared elementwise producer into its first elementwise consumer
/// (sharesElementwiseProducer): the fused op also yields the producer's
/// result, which the producer's other users read from it.
struct FuseSharedProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!sharesElementwiseProducer(&operand) ||
          !linalg::areElementwiseOpsFusable(&operand))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          return use.getOwner() != producer;
        });
      rewriter.eraseOp(consumer);
      return success();
    }
    return failure();
  }
};

/// Named elementwise ops (`linalg.add`, `linalg.div`, ...) as generics, which
/// upstream fusion takes. Fills and copies stay named: fills fold into their
/// users, and copies give repeated results their own buffers.
void generalizeElementwiseOps(Operation *root) {
  IRRewriter rewriter(root->getContext());
  root->walk([&](linalg::LinalgOp op) {
    if (isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp>(op) ||
        !op.hasPureTensorSemantics() || !linalg::isElementwise(op))
      return;
    rewriter.setInsertionPoint(op);
    (void)linalg::generalizeNamedOp(rewriter, op);
  });
}

struct FuseElementwise : pp::impl::PPFuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    generalizeElementwiseOps(getOperation());
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    patterns.add<ForwardFilledInit, DropZeroAccumulation, FuseSharedProducer>(
        context);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    linalg::FillOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
