//===- StripAttributes.cpp - drop pp attributes before translation --------===//
//
// pp-strip-attributes: removes the discardable `pp.*` attributes, which have
// no meaning once a program is LLVM IR.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSTRIPATTRIBUTES
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

struct StripAttributes : pp::impl::PPStripAttributesBase<StripAttributes> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
        if (attr.getName().strref().starts_with("pp."))
          op->removeDiscardableAttr(attr.getName());
    });
  }
};

} // namespace
