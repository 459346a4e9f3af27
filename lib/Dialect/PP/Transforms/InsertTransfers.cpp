// Placeholder: being written.
#include "pp/Dialect/PP/Transforms/Passes.h"
namespace mlir::pp {
#define GEN_PASS_DEF_PPINSERTTRANSFERS
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
namespace {
struct InsertTransfersPass : impl::PPInsertTransfersBase<InsertTransfersPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
} // namespace mlir::pp
