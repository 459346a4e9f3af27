//===- GemmToRuntime.cpp - marked contractions as pprt_gemm calls ---------===//
//
// Rewrites the bufferized contractions that pp-select-gemm marked into calls
// of the runtime's GEMM entry, with pointers, row and batch strides taken
// from the memrefs.
//
//===----------------------------------------------------------------------===//

#include "pp/Conversion/Passes.h"
#include "pp/Conversion/RuntimeFunctions.h"
#include "pp/StageCode/GemmLayout.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "pp-abi/pprt_abi.h"

namespace mlir::pp {
#define GEN_PASS_DEF_CONVERTGEMMTORUNTIME
#include "pp/Conversion/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// The static element strides of a memref operand.
static FailureOr<SmallVector<int64_t>> memrefStrides(OpOperand &operand) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return failure();
  return strides;
}

/// A row-major bf16 copy of the static-shaped f32 memref `value`, rounded
/// to nearest even, allocated at `b`'s position.
static Value truncatedCopy(OpBuilder &b, Location loc, Value value) {
  auto type = cast<MemRefType>(value.getType());
  auto copy = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), b.getBF16Type()));
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, ValueRange{value}, ValueRange{copy}, maps, iterators,
      [](OpBuilder &nested, Location loc, ValueRange args) {
        Value narrow =
            arith::TruncFOp::create(nested, loc, nested.getBF16Type(), args[0]);
        linalg::YieldOp::create(nested, loc, narrow);
      });
  return copy;
}

/// The fill of `out` with zero right before `op` (only allocations and ops
/// without memory effects between), which beta = 0 makes redundant.
static linalg::FillOp zeroFillBefore(Operation *op, Value out) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill)
      return fill.getOutputs()[0] == out &&
                     matchPattern(fill.getInputs()[0], m_AnyZeroFloat())
                 ? fill
                 : nullptr;
    if (!isMemoryEffectFree(prev) && !isa<memref::AllocOp>(prev))
      return nullptr;
  }
  return nullptr;
}

namespace {

/// The pprt element type code of f32 or bf16 memref elements.
static int32_t runtimeType(Value memref) {
  return getElementTypeOrSelf(memref.getType()).isBF16() ? PPRT_BF16 : PPRT_F32;
}

/// Builds the call of one plan at the op's position, reading A and B from
/// `a` and `bm` (the op's inputs, or their bf16 copies).
class GemmCallBuilder {
public:
  GemmCallBuilder(linalg::LinalgOp op, const GemmPlan &plan,
                  func::FuncOp callee, Value a, Value bm)
      : op(op), plan(plan), callee(callee), a(a), bm(bm), b(op),
        loc(op.getLoc()) {}

  void build(bool zeroInit) {
    Value c = op.getDpsInitOperand(0)->get();
    Value baseA = elementAddress(a), baseB = elementAddress(bm),
          baseC = elementAddress(c);
    SmallVector<Value> offA, offB, offC, firstK;
    for (const GemmLoop &loop : plan.loops) {
      auto forOp =
          scf::ForOp::create(b, loc, index(0), index(loop.size), index(1));
      b.setInsertionPointToStart(forOp.getBody());
      Value iv = forOp.getInductionVar();
      offA.push_back(scaled(iv, loop.strideA));
      offB.push_back(scaled(iv, loop.strideB));
      offC.push_back(scaled(iv, loop.strideC));
      if (loop.reduction)
        firstK.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                               iv, index(0)));
    }
    Value beta = betaFor(zeroInit, firstK);
    Value alpha = plan.alpha ? plan.alpha : f32(1.0f);
    func::CallOp::create(
        b, loc, callee,
        ValueRange{i32(runtimeType(a)), i32(PPRT_F32), i32(plan.transA),
                   i32(plan.transB), i64(plan.batch), i64(plan.m), i64(plan.n),
                   i64(plan.k), alpha, pointer(baseA, offA, a), i64(plan.lda),
                   i64(plan.strideA), pointer(baseB, offB, bm), i64(plan.ldb),
                   i64(plan.strideB), beta, pointer(baseC, offC, c),
                   i64(plan.ldc), i64(plan.strideC)});
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value f32(float v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          llvm::APFloat(v));
  }
  Value scaled(Value iv, int64_t stride) {
    return arith::MulIOp::create(b, loc, iv, index(stride));
  }

  /// Bytes per element of `memref`.
  Value elementBytes(Value memref) {
    return index(
        getElementTypeOrSelf(memref.getType()).getIntOrFloatBitWidth() / 8);
  }

  /// The address, as an index, of the first element of `memref`: its
  /// aligned pointer plus its offset.
  Value elementAddress(Value memref) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    Value aligned =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    Value bytes =
        arith::MulIOp::create(b, loc, meta.getOffset(), elementBytes(memref));
    return arith::AddIOp::create(b, loc, aligned, bytes);
  }

  /// `base` (in `memref`) advanced by the loops' element offsets, as a
  /// pointer.
  Value pointer(Value base, ArrayRef<Value> offsets, Value memref) {
    Value address = base;
    for (Value offset : offsets)
      address = arith::AddIOp::create(
          b, loc, address,
          arith::MulIOp::create(b, loc, offset, elementBytes(memref)));
    Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
  }

  /// beta = 1 accumulates into C; a zero-filled C takes beta = 0 in the
  /// first iteration of the reduction loops.
  Value betaFor(bool zeroInit, ArrayRef<Value> firstK) {
    if (!zeroInit)
      return f32(1.0f);
    if (firstK.empty())
      return f32(0.0f);
    Value first = firstK.front();
    for (Value next : firstK.drop_front())
      first = arith::AndIOp::create(b, loc, first, next);
    return arith::SelectOp::create(b, loc, first, f32(0.0f), f32(1.0f));
  }

  linalg::LinalgOp op;
  const GemmPlan &plan;
  func::FuncOp callee;
  Value a, bm;
  OpBuilder b;
  Location loc;
};

struct ConvertGemmToRuntime
    : pp::impl::ConvertGemmToRuntimeBase<ConvertGemmToRuntime> {
  using ConvertGemmToRuntimeBase::ConvertGemmToRuntimeBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> marked;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (auto mark = op->getAttrOfType<StringAttr>(kGemmAttrName))
        if (mark.getValue() == kGemmLibrary)
          marked.push_back(op);
    });
    for (linalg::LinalgOp op : marked)
      if (failed(convert(op)))
        return signalPassFailure();
  }

  /// Declares pprt_gemm on first use.
  FailureOr<func::FuncOp> gemmFunction() {
    if (!callee)
      callee = RuntimeFunctions(&getContext()).gemm.declare(getOperation());
    return *callee;
  }

  LogicalResult convert(linalg::LinalgOp op) {
    std::string why;
    FailureOr<GemmPlan> plan = failure();
    if (!op.hasPureBufferSemantics())
      why = "it is not bufferized";
    else
      plan = planGemm(op, memrefStrides, why);
    Value c = op.getDpsInitOperand(0)->get();
    if (succeeded(plan) && (op.getDpsInputOperand(plan->lhs)->get() == c ||
                            op.getDpsInputOperand(plan->rhs)->get() == c)) {
      plan = failure();
      why = "its output is also an input";
    }
    if (failed(plan)) {
      op.emitRemark("pp.gemm = \"library\" kept as generated code: ") << why;
      op->removeAttr(kGemmAttrName);
      return success();
    }
    FailureOr<func::FuncOp> gemm = gemmFunction();
    if (failed(gemm))
      return failure();
    linalg::FillOp fill = zeroFillBefore(op, c);
    Value a = op.getDpsInputOperand(plan->lhs)->get();
    Value bm = op.getDpsInputOperand(plan->rhs)->get();
    SmallVector<Value> copies;
    if (precision == GemmPrecision::BF16)
      copies = narrowInputs(op, *plan);
    if (!copies.empty()) {
      a = copies[0];
      bm = copies[1];
    }
    GemmCallBuilder(op, *plan, *gemm, a, bm)
        .build(/*zeroInit=*/fill != nullptr);
    OpBuilder after(op->getContext());
    after.setInsertionPointAfter(op);
    for (Value copy : copies)
      memref::DeallocOp::create(after, op.getLoc(), copy);
    if (fill)
      fill.erase();
    op->erase();
    return success();
  }

  /// For precision=bf16: re-plans `plan` for row-major copies of A and B
  /// and returns the copies (A's, B's), made before `op`. A plan needs
  /// static shapes, so the copies' plan exists; were it missing, the op
  /// keeps fp32 inputs, with a remark.
  SmallVector<Value> narrowInputs(linalg::LinalgOp op, GemmPlan &plan) {
    OpOperand *lhs = op.getDpsInputOperand(plan.lhs);
    OpOperand *rhs = op.getDpsInputOperand(plan.rhs);
    std::string why;
    FailureOr<GemmPlan> narrow = planGemm(
        op,
        [&](OpOperand &operand) {
          return &operand == lhs || &operand == rhs ? rowMajorStrides(operand)
                                                    : memrefStrides(operand);
        },
        why);
    if (failed(narrow)) {
      op.emitRemark("pp.gemm = \"library\" keeps fp32 inputs: ") << why;
      return {};
    }
    plan = *narrow;
    OpBuilder b(op);
    return {truncatedCopy(b, op.getLoc(), lhs->get()),
            truncatedCopy(b, op.getLoc(), rhs->get())};
  }

  std::optional<FailureOr<func::FuncOp>> callee;
};

} // namespace
