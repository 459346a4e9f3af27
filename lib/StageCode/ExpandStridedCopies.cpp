//===- ExpandStridedCopies.cpp - strided memref copies as linalg ----------===//
//
// pp-expand-strided-copies: rewrites memref.copy between buffers of which one
// is strided into linalg.copy, which lowers without MLIR's runner library.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPEXPANDSTRIDEDCOPIES
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

bool isDense(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getLayout().isIdentity();
}

struct ExpandStridedCopies
    : pp::impl::PPExpandStridedCopiesBase<ExpandStridedCopies> {
  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      if (isDense(copy.getSource()) && isDense(copy.getTarget()))
        return;
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};

} // namespace
