// Placeholder: being written.
#include "pp/Dialect/PP/Transforms/Passes.h"
namespace mlir::pp {
#define GEN_PASS_DEF_PPVERIFYSCHEDULE
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
namespace {
struct VerifySchedulePass : impl::PPVerifyScheduleBase<VerifySchedulePass> {
  void runOnOperation() override {}
};
} // namespace
} // namespace mlir::pp
