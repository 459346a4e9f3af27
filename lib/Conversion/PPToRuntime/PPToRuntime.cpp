// Placeholder: being written.
#include "pp/Conversion/Passes.h"
namespace mlir::pp {
#define GEN_PASS_DEF_CONVERTPPTORUNTIME
#include "pp/Conversion/Passes.h.inc"
namespace {
struct ConvertPPToRuntimePass : impl::ConvertPPToRuntimeBase<ConvertPPToRuntimePass> {
  void runOnOperation() override {}
};
} // namespace
} // namespace mlir::pp
