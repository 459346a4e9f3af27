// Placeholder: being written.
#include "pp/Dialect/PP/Transforms/Passes.h"
namespace mlir::pp {
#define GEN_PASS_DEF_PPSCHEDULE
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
namespace {
struct SchedulePass : impl::PPScheduleBase<SchedulePass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
} // namespace mlir::pp
