//===- GemmLayout.cpp - contractions as strided BLAS GEMM calls -----------===//
//
// Maps a contraction's loop dimensions onto the batch, rows, columns and
// reduction of one strided row-major GEMM, collapsing groups of dimensions
// that are contiguous in every operand and looping over the rest.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/GemmLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::pp;

int64_t GemmPlan::totalFlops() const {
  int64_t flops = callFlops();
  for (const GemmLoop &loop : loops)
    flops *= loop.size;
  return flops;
}

FailureOr<SmallVector<int64_t>> mlir::pp::rowMajorStrides(OpOperand &operand) {
  auto type = dyn_cast<ShapedType>(operand.get().getType());
  if (!type || !type.hasStaticShape())
    return failure();
  SmallVector<int64_t> strides(type.getRank(), 1);
  for (int64_t i = type.getRank() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * type.getDimSize(i + 1);
  return strides;
}

namespace {

/// The element stride of every loop dimension in each of A, B and C (0 where
/// the operand does not index the dimension), and the loop sizes.
struct LoopStrides {
  SmallVector<int64_t> size, a, b, c;
};

/// A group of dimensions collapsed into one: its size and the stride of its
/// innermost dimension in A, B and C (0: absent, or the group is empty).
struct Collapsed {
  int64_t size = 1, a = 0, b = 0, c = 0;
};

} // namespace

/// The two inputs whose product the body accumulates into the output:
/// exactly `yield(addf(out, mulf(x, y)))`, or `yield(addf(out, mulf(mulf(x,
/// y), alpha)))` with `alpha` defined above the op, x and y block arguments
/// of two distinct inputs. Other inputs must be unused.
static FailureOr<std::pair<unsigned, unsigned>>
matchMultiplyAccumulate(linalg::LinalgOp op, Value &alpha) {
  Block *body = op.getBlock();
  if (op.getNumDpsInits() != 1 || !body || body->getOperations().size() > 4)
    return failure();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield->getOperand(0).getDefiningOp<arith::AddFOp>();
  BlockArgument out = op.getRegionOutputArgs()[0];
  if (!add || !out.hasOneUse())
    return failure();
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || (add.getLhs() != out && add.getRhs() != out))
    return failure();
  alpha = {};
  if (body->getOperations().size() == 4) {
    auto inner = mul.getLhs().getDefiningOp<arith::MulFOp>();
    alpha = mul.getRhs();
    if (!inner) {
      inner = mul.getRhs().getDefiningOp<arith::MulFOp>();
      alpha = mul.getLhs();
    }
    if (!inner || !alpha.getParentRegion()->isProperAncestor(&op->getRegion(0)))
      return failure();
    mul = inner;
  }
  auto x = dyn_cast<BlockArgument>(mul.getLhs());
  auto y = dyn_cast<BlockArgument>(mul.getRhs());
  unsigned numInputs = op.getNumDpsInputs();
  if (!x || !y || x.getArgNumber() >= numInputs ||
      y.getArgNumber() >= numInputs || x.getArgNumber() == y.getArgNumber())
    return failure();
  return std::make_pair(x.getArgNumber(), y.getArgNumber());
}

/// Whether `dims`, ordered outermost first, collapse into one dimension of an
/// operand with element strides `stride` (absent dimensions have stride 0).
static bool collapses(ArrayRef<unsigned> dims, ArrayRef<int64_t> stride,
                      ArrayRef<int64_t> size) {
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (stride[dims[i]] != stride[dims[i + 1]] * size[dims[i + 1]])
      return false;
  return true;
}

/// Orders `dims` outermost first by their stride in `key` and drops the
/// dimensions of size 1, which any layout collapses.
static SmallVector<unsigned> ordered(ArrayRef<unsigned> dims,
                                     ArrayRef<int64_t> key,
                                     ArrayRef<int64_t> size) {
  SmallVector<unsigned> result;
  for (unsigned d : dims)
    if (size[d] != 1)
      result.push_back(d);
  llvm::stable_sort(result,
                    [&](unsigned x, unsigned y) { return key[x] > key[y]; });
  return result;
}

/// Splits `dims` (ordered) into its longest innermost suffix that collapses
/// in every operand of `operands`, returned, and the rest, appended to
/// `outer`.
static SmallVector<unsigned>
innermostCollapsing(ArrayRef<unsigned> dims,
                    ArrayRef<ArrayRef<int64_t>> operands,
                    ArrayRef<int64_t> size, SmallVectorImpl<unsigned> &outer) {
  size_t first = dims.size();
  auto fits = [&](ArrayRef<unsigned> group) {
    return llvm::all_of(operands, [&](ArrayRef<int64_t> stride) {
      return collapses(group, stride, size);
    });
  };
  while (first > 0 && fits(dims.drop_front(first - 1)))
    --first;
  outer.append(dims.begin(), dims.begin() + first);
  return SmallVector<unsigned>(dims.drop_front(first));
}

/// The run of consecutive `dims` (ordered) with the most elements that
/// collapses in every operand of `operands`; the rest is appended to `rest`.
static SmallVector<unsigned>
largestCollapsing(ArrayRef<unsigned> dims, ArrayRef<ArrayRef<int64_t>> operands,
                  ArrayRef<int64_t> size, SmallVectorImpl<unsigned> &rest) {
  size_t bestBegin = 0, bestEnd = 0;
  int64_t bestSize = 1;
  for (size_t begin = 0; begin < dims.size(); ++begin) {
    int64_t elements = 1;
    for (size_t end = begin + 1; end <= dims.size(); ++end) {
      ArrayRef<unsigned> run = dims.slice(begin, end - begin);
      if (!llvm::all_of(operands, [&](ArrayRef<int64_t> stride) {
            return collapses(run, stride, size);
          }))
        break;
      elements *= size[dims[end - 1]];
      if (elements > bestSize) {
        bestBegin = begin;
        bestEnd = end;
        bestSize = elements;
      }
    }
  }
  rest.append(dims.begin(), dims.begin() + bestBegin);
  rest.append(dims.begin() + bestEnd, dims.end());
  return SmallVector<unsigned>(dims.slice(bestBegin, bestEnd - bestBegin));
}

static Collapsed collapse(ArrayRef<unsigned> group, const LoopStrides &s) {
  Collapsed result;
  for (unsigned d : group)
    result.size *= s.size[d];
  if (!group.empty())
    result = {result.size, s.a[group.back()], s.b[group.back()],
              s.c[group.back()]};
  return result;
}

/// A rows x cols matrix with row and column strides as the row-major matrix
/// `pprt_gemm` reads, maybe transposed: sets `transposed` and `ld`, or fails
/// when neither stride is 1 or rows overlap.
static LogicalResult asRowMajor(int64_t rows, int64_t cols, int64_t rowStride,
                                int64_t colStride, bool &transposed,
                                int64_t &ld) {
  if (cols == 1 || colStride == 1) {
    transposed = false;
    ld = rows == 1 ? std::max<int64_t>(cols, 1) : rowStride;
    return success(ld >= cols);
  }
  if (rows == 1 || rowStride == 1) {
    transposed = true;
    ld = cols == 1 ? std::max<int64_t>(rows, 1) : colStride;
    return success(ld >= rows);
  }
  return failure();
}

/// Per loop dimension, the stride of each operand, from the operands' own
/// dimension strides through their indexing maps.
static FailureOr<LoopStrides> loopStrides(linalg::LinalgOp op, unsigned lhs,
                                          unsigned rhs, OperandStrides strides,
                                          std::string &why) {
  LoopStrides s;
  s.size = op.getStaticLoopRanges();
  unsigned numLoops = s.size.size();
  s.a.assign(numLoops, 0);
  s.b.assign(numLoops, 0);
  s.c.assign(numLoops, 0);
  OpOperand *operands[] = {op.getDpsInputOperand(lhs),
                           op.getDpsInputOperand(rhs), op.getDpsInitOperand(0)};
  SmallVector<int64_t> *targets[] = {&s.a, &s.b, &s.c};
  for (auto [operand, target] : llvm::zip(operands, targets)) {
    FailureOr<SmallVector<int64_t>> dimStrides = strides(*operand);
    if (failed(dimStrides)) {
      why = "an operand has dynamic strides or shape";
      return failure();
    }
    AffineMap map = op.getMatchingIndexingMap(operand);
    for (auto [result, stride] : llvm::zip(map.getResults(), *dimStrides))
      (*target)[cast<AffineDimExpr>(result).getPosition()] = stride;
  }
  return s;
}

static FailureOr<GemmPlan>
planWithOrders(const linalg::ContractionDimensions &dims, const LoopStrides &s,
               bool byM, bool byN, bool byK, std::string &why);

namespace {
/// What makes an op a contraction: the inputs multiplied, the scale and the
/// classified loops.
struct Contraction {
  unsigned lhs, rhs;
  Value alpha;
  linalg::ContractionDimensions dims;
};
} // namespace

static FailureOr<Contraction> matchContraction(linalg::LinalgOp op,
                                               std::string &why) {
  Contraction c;
  FailureOr<std::pair<unsigned, unsigned>> inputs =
      matchMultiplyAccumulate(op, c.alpha);
  if (failed(inputs)) {
    why = "the body is not an accumulated product of two inputs";
    return failure();
  }
  std::tie(c.lhs, c.rhs) = *inputs;
  SmallVector<OpOperand *> operands = {op.getDpsInputOperand(c.lhs),
                                       op.getDpsInputOperand(c.rhs),
                                       op.getDpsInitOperand(0)};
  if (!llvm::all_of(operands, [](OpOperand *operand) {
        return getElementTypeOrSelf(operand->get().getType()).isF32();
      })) {
    why = "an operand is not f32";
    return failure();
  }
  auto maps = llvm::map_to_vector(operands, [&](OpOperand *operand) {
    return op.getMatchingIndexingMap(operand);
  });
  if (!llvm::all_of(maps,
                    [](AffineMap m) { return m.isProjectedPermutation(); }) ||
      op.hasDynamicShape()) {
    why = "an indexing map is not a projected permutation or a shape is "
          "dynamic";
    return failure();
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(maps);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty() ||
      dims->batch.size() + dims->m.size() + dims->n.size() + dims->k.size() !=
          op.getNumLoops()) {
    why = "not a contraction: a loop is not a batch, M, N or K dimension";
    return failure();
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if ((iterators[d] == utils::IteratorType::reduction) !=
        llvm::is_contained(dims->k, d)) {
      why = "the reduction loops are not the K dimensions";
      return failure();
    }
  c.dims = *dims;
  return c;
}

FailureOr<GemmPlan> mlir::pp::planGemm(linalg::LinalgOp op,
                                       OperandStrides strides,
                                       std::string &why) {
  FailureOr<Contraction> contraction = matchContraction(op, why);
  if (failed(contraction))
    return failure();
  auto [lhs, rhs, alpha, dims] = *contraction;
  FailureOr<LoopStrides> s = loopStrides(op, lhs, rhs, strides, why);
  if (failed(s))
    return failure();
  if (llvm::is_contained(s->size, 0)) {
    why = "a loop is empty";
    return failure();
  }

  // Each group keeps the innermost dimensions that collapse, ordered by
  // either operand it lives in; try every choice and keep the plan with the
  // fewest calls.
  FailureOr<GemmPlan> best = failure();
  for (unsigned choice = 0; choice < 8; ++choice) {
    FailureOr<GemmPlan> plan =
        planWithOrders(dims, *s, choice & 1, choice & 2, choice & 4, why);
    if (succeeded(plan) &&
        (failed(best) || plan->callFlops() > best->callFlops())) {
      plan->lhs = lhs;
      plan->rhs = rhs;
      plan->alpha = alpha;
      if (plan->swapped)
        std::swap(plan->lhs, plan->rhs);
      best = plan;
    }
  }
  return best;
}

/// The plan whose M, N and K groups are ordered by their strides in C, C and
/// A, or, where `byM`, `byN`, `byK` are set, in A, B and B.
static FailureOr<GemmPlan>
planWithOrders(const linalg::ContractionDimensions &dims, const LoopStrides &ls,
               bool byM, bool byN, bool byK, std::string &why) {
  const LoopStrides *s = &ls;
  // Reduction dimensions that do not collapse become loops accumulating
  // into C; M and N ones join the batch candidates.
  SmallVector<unsigned> reductionLoops;
  SmallVector<unsigned> k =
      innermostCollapsing(ordered(dims.k, byK ? s->b : s->a, s->size),
                          {s->a, s->b}, s->size, reductionLoops);
  SmallVector<unsigned> outer = llvm::to_vector(dims.batch);
  SmallVector<unsigned> m =
      innermostCollapsing(ordered(dims.m, byM ? s->a : s->c, s->size),
                          {s->a, s->c}, s->size, outer);
  SmallVector<unsigned> n =
      innermostCollapsing(ordered(dims.n, byN ? s->b : s->c, s->size),
                          {s->b, s->c}, s->size, outer);
  SmallVector<unsigned> loopDims;
  SmallVector<unsigned> batch = largestCollapsing(
      ordered(outer, s->c, s->size), {s->a, s->b, s->c}, s->size, loopDims);

  Collapsed cm = collapse(m, *s), cn = collapse(n, *s), ck = collapse(k, *s),
            cb = collapse(batch, *s);
  GemmPlan plan;
  plan.swapped = false;
  plan.batch = cb.size;
  plan.strideA = cb.a;
  plan.strideB = cb.b;
  plan.strideC = cb.c;
  for (unsigned d : loopDims)
    plan.loops.push_back({s->size[d], s->a[d], s->b[d], s->c[d], false});
  for (unsigned d : reductionLoops)
    plan.loops.push_back({s->size[d], s->a[d], s->b[d], s->c[d], true});

  // C^T = B^T A^T when C is stored column-major.
  bool cTransposed;
  if (failed(asRowMajor(cm.size, cn.size, cm.c, cn.c, cTransposed, plan.ldc))) {
    why = "the output has no unit stride in its rows or columns";
    return failure();
  }
  if (cTransposed) {
    plan.swapped = true;
    std::swap(cm, cn);
    std::swap(cm.a, cm.b);
    std::swap(cn.a, cn.b);
    std::swap(ck.a, ck.b);
    std::swap(plan.strideA, plan.strideB);
    for (GemmLoop &loop : plan.loops)
      std::swap(loop.strideA, loop.strideB);
    (void)asRowMajor(cm.size, cn.size, cm.c, cn.c, cTransposed, plan.ldc);
  }
  plan.m = cm.size;
  plan.n = cn.size;
  plan.k = ck.size;
  if (failed(asRowMajor(cm.size, ck.size, cm.a, ck.a, plan.transA, plan.lda)) ||
      failed(asRowMajor(ck.size, cn.size, ck.b, cn.b, plan.transB, plan.ldb))) {
    why = "an input has no unit stride in its rows or columns";
    return failure();
  }
  return plan;
}
