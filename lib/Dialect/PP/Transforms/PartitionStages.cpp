// Placeholder: being written.
#include "pp/Dialect/PP/Transforms/Passes.h"
namespace mlir::pp {
#define GEN_PASS_DEF_PPPARTITIONSTAGES
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
namespace {
struct PartitionStagesPass : impl::PPPartitionStagesBase<PartitionStagesPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
} // namespace mlir::pp
