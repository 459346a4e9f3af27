//===- SelectGemm.cpp - choose the contractions that call pprt_gemm -------===//
//
// Marks the contractions on tensors that become runtime GEMM calls after
// bufferization (convert-gemm-to-runtime).
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/ContractionTiling.h"
#include "pp/StageCode/GemmLayout.h"
#include "pp/StageCode/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSELECTGEMM
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

namespace {

struct PPSelectGemm : pp::impl::PPSelectGemmBase<PPSelectGemm> {
  using Base::Base;

  /// The measured rule of bench/gemm_choice.md: the library where a call is
  /// large enough to amortise its overhead and is not repeated in loops;
  /// what pp-vectorize-contractions (when it runs) makes FMA tiles of only
  /// from a larger call, where OpenBLAS's cache blocking wins. A batch of
  /// unscaled products is judged by one product: its products run one after
  /// another, each from the caches (attention's heads).
  bool prefersLibrary(linalg::LinalgOp op, const GemmPlan &plan) const {
    if (gemm != GemmChoice::Auto)
      return gemm == GemmChoice::Library;
    bool vectorized = vectorizeContractions && isVectorizableContraction(op);
    int64_t minFlops = vectorized ? minVectorizedLibraryFlops : minLibraryFlops;
    int64_t flops = plan.callFlops();
    if (vectorized && batchByProduct && !plan.alpha)
      flops /= plan.batch;
    int64_t calls = plan.totalFlops() / plan.callFlops();
    return flops >= minFlops && calls <= maxLibraryCalls;
  }

  void report(linalg::LinalgOp op, const GemmPlan &plan, bool library) {
    int64_t calls = plan.totalFlops() / plan.callFlops();
    op.emitRemark(llvm::formatv(
        "gemm {0}: batch={1} m={2} n={3} k={4} trans_a={5} trans_b={6} "
        "calls={7}",
        library ? "library" : "generated", plan.batch, plan.m, plan.n, plan.k,
        int(plan.transA), int(plan.transB), calls));
  }

  void runOnOperation() override {
    for (auto [name, value] :
         {std::pair<StringRef, int64_t>{"min-library-flops", minLibraryFlops},
          {"min-vectorized-library-flops", minVectorizedLibraryFlops},
          {"max-library-calls", maxLibraryCalls}})
      if (value < 0) {
        getOperation()->emitError() << "pp-select-gemm: " << name
                                    << " must not be negative, got " << value;
        return signalPassFailure();
      }
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      std::string why;
      FailureOr<GemmPlan> plan = planGemm(op, rowMajorStrides, why);
      if (failed(plan)) {
        if (printPlans && why.find("body") == std::string::npos)
          op.emitRemark("gemm generated: ") << why;
        return;
      }
      bool library = prefersLibrary(op, *plan);
      if (printPlans)
        report(op, *plan, library);
      if (library)
        op->setAttr(kGemmAttrName,
                    StringAttr::get(op->getContext(), kGemmLibrary));
    });
  }
};

} // namespace
