//===- DemoteF64.cpp - compute f64 intermediates in f32 -------------------===//
//
// pp-demote-f64: rewrites every f64 value of a function (scalars, tensor
// elements, constants) to f32, the one float type pp stores and sends.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Import/Passes.h"

#include "pp/Dialect/PP/IR/ResourceLiteral.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPDEMOTEF64
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// `type` with f64 (alone or as the element type) replaced by f32, or null
/// when it holds no f64.
static Type getDemotedType(Type type) {
  if (type.isF64())
    return Float32Type::get(type.getContext());
  auto shaped = dyn_cast<ShapedType>(type);
  if (shaped && shaped.getElementType().isF64())
    return shaped.clone(Float32Type::get(type.getContext()));
  return Type();
}

/// The f32 version of an f64 constant's value, or null when it cannot be
/// rewritten.
static Attribute getDemotedValue(Attribute value, Type type) {
  if (auto scalar = dyn_cast<FloatAttr>(value))
    return FloatAttr::get(type, scalar.getValueAsDouble());
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.mapValues(
        Float32Type::get(type.getContext()), [](const APFloat &element) {
          APFloat narrowed = element;
          bool lost = false;
          narrowed.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                           &lost);
          return narrowed.bitcastToAPInt();
        });
  return Attribute();
}

/// Gives the values `op` defines, and those of its nested blocks, f32
/// types in place of f64.
static LogicalResult demoteResults(Operation *op) {
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        if (Type demoted = getDemotedType(arg.getType()))
          arg.setType(demoted);
  bool changed = false;
  for (OpResult result : op->getResults()) {
    if (Type demoted = getDemotedType(result.getType())) {
      result.setType(demoted);
      changed = true;
    }
  }
  auto constant = dyn_cast<arith::ConstantOp>(op);
  if (!changed || !constant)
    return success();
  Attribute data = constant.getValue();
  // An f64 buffer of a PyTorch export is a resource blob.
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(data)) {
    FailureOr<DenseElementsAttr> literal = pp::getResourceLiteral(
        resource, [&] { return constant.emitOpError(); });
    if (failed(literal))
      return failure();
    data = *literal;
  }
  Attribute value = getDemotedValue(data, constant.getType());
  if (!value)
    return constant.emitOpError() << "holds f64 data pp cannot convert to f32 ("
                                  << constant.getValue() << ")";
  constant.setValueAttr(cast<TypedAttr>(value));
  return success();
}

namespace {

struct DemoteF64 : pp::impl::PPDemoteF64Base<DemoteF64> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto type = func.getFunctionType();
    auto demote = [](TypeRange types) {
      return llvm::map_to_vector(types, [](Type type) {
        Type demoted = getDemotedType(type);
        return demoted ? demoted : type;
      });
    };
    func.setType(FunctionType::get(func.getContext(), demote(type.getInputs()),
                                   demote(type.getResults())));
    WalkResult result = func.walk<WalkOrder::PreOrder>([](Operation *op) {
      if (isa<func::FuncOp>(op))
        return WalkResult::advance();
      return failed(demoteResults(op)) ? WalkResult::interrupt()
                                       : WalkResult::advance();
    });
    for (Block &block : func.getBody())
      for (BlockArgument arg : block.getArguments())
        if (Type demoted = getDemotedType(arg.getType()))
          arg.setType(demoted);
    if (result.wasInterrupted())
      return signalPassFailure();
    // Conversions between f32 and f64 are now f32 to f32.
    func.walk([](Operation *op) {
      if (!isa<arith::ExtFOp, arith::TruncFOp>(op) ||
          op->getOperand(0).getType() != op->getResult(0).getType())
        return;
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
    });
  }
};

} // namespace
