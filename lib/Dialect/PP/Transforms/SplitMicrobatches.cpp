// Placeholder: being written.
#include "pp/Dialect/PP/Transforms/Passes.h"
namespace mlir::pp {
#define GEN_PASS_DEF_PPSPLITMICROBATCHES
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
namespace {
struct SplitMicrobatchesPass : impl::PPSplitMicrobatchesBase<SplitMicrobatchesPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
} // namespace mlir::pp
