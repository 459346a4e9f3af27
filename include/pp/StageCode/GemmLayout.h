//===- GemmLayout.h - contractions as strided BLAS GEMM calls ---*- C++ -*-===//
//
// Decides whether a linalg contraction, given the element strides of its
// operands, is one batched row-major GEMM of the runtime ABI (`pprt_gemm`),
// possibly inside loops over the dimensions that do not collapse.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_GEMMLAYOUT_H
#define PP_STAGECODE_GEMMLAYOUT_H

#include "pp/Dialect/PP/IR/PPDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir::pp {

// GemmChoice (PPEnums.td): how contractions are lowered, by MLIR's code
// generation, by the runtime's GEMM entry, or per shape (`pp-select-gemm`).
// GemmPrecision (PPEnums.td): the element type library GEMMs read their
// inputs in, fp32 or bf16 (rounded from the fp32 values) with fp32 products
// and accumulation.

// `pp-select-gemm` marks library GEMMs with `pp.gemm = "library"`
// (kGemmAttrName, kGemmLibrary in PPDialect.h).

/// A loop around the GEMM call: its trip count, the element step of A, B
/// and C per iteration, and whether it is a reduction (its iterations
/// accumulate into the same C).
struct GemmLoop {
  int64_t size;
  int64_t strideA, strideB, strideC;
  bool reduction;
};

/// One `pprt_gemm` call per iteration of `loops`:
///   C_p = alpha op(A_p) op(B_p) (+ C_p), p < batch,
/// with the argument meanings of runtime/include/pprt/pprt.h.
struct GemmPlan {
  /// The op's input operand numbers that A and B read.
  unsigned lhs, rhs;
  /// Whether A reads the op's second multiplied input: C is stored
  /// column-major, so C^T = B^T A^T is computed.
  bool swapped;
  bool transA, transB;
  int64_t batch, m, n, k;
  int64_t lda, ldb, ldc;
  int64_t strideA, strideB, strideC;
  llvm::SmallVector<GemmLoop> loops;
  /// The f32 scalar the product is scaled by, defined above the op; null
  /// for 1.
  Value alpha;

  /// Floating-point operations of one call and of the whole op.
  int64_t callFlops() const { return 2 * batch * m * n * k; }
  int64_t totalFlops() const;
};

/// Element strides of one operand's dimensions (in its type's order), or
/// failure when they are not static.
using OperandStrides =
    llvm::function_ref<FailureOr<llvm::SmallVector<int64_t>>(OpOperand &)>;

/// The plan for `op` when it is an f32 contraction (`C += A * B`, maybe
/// times a scalar defined above the op, over projected-permutation maps,
/// other inputs unused, every loop a batch, M, N or K dimension of
/// `linalg::inferContractionDims`) whose matrices have a unit stride in rows
/// or columns; failure with the reason in `why`. The M, N and K groups keep
/// their innermost dimensions that collapse into one strided dimension of
/// their operands, the batch the largest collapsing run of the batch
/// dimensions and the M and N dimensions left; the others become loops. Of
/// the orders that allows, the plan with the largest calls wins.
FailureOr<GemmPlan> planGemm(linalg::LinalgOp op, OperandStrides strides,
                             std::string &why);

/// The row-major strides of a tensor operand (what bufferization gives it
/// with identity layouts).
FailureOr<llvm::SmallVector<int64_t>> rowMajorStrides(OpOperand &operand);

} // namespace mlir::pp

#endif // PP_STAGECODE_GEMMLAYOUT_H
