// Placeholder: being written.
#include "pp/Dialect/PP/Transforms/Passes.h"
namespace mlir::pp {
#define GEN_PASS_DEF_PPDERIVEBACKWARD
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
namespace {
struct DeriveBackwardPass : impl::PPDeriveBackwardBase<DeriveBackwardPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
} // namespace mlir::pp
