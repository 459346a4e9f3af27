//===- OutlineLoopNests.cpp - stage code as calls of shared loop nests ----===//
//
// pp-outline-loop-nests: moves each loop nest of a stage function into a
// private function, one per distinct nest, so that LLVM's work grows with
// the distinct nests and not with the size of one function holding them all.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPOUTLINELOOPNESTS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

/// The name every candidate function has while it is compared with the
/// others, so that only its body and type tell nests apart.
constexpr llvm::StringLiteral kCandidateName = "pp_nest";

/// Whether `value` is a constant the outlined function recomputes instead
/// of receiving it.
bool isCopiedConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

/// The values defined outside `nest` that it reads, in first-use order.
llvm::SetVector<Value> getCapturedValues(Operation *nest) {
  llvm::SetVector<Value> captured(nest->operand_begin(), nest->operand_end());
  for (Region &region : nest->getRegions())
    getUsedValuesDefinedAbove(region, captured);
  return captured;
}

class NestOutliner {
public:
  NestOutliner(ModuleOp module) : symbols(module) {}

  /// Replaces every top-level op with regions in `stage` by a call.
  void outlineNests(func::FuncOp stage) {
    for (Block &block : stage.getBody())
      for (Operation &op : llvm::make_early_inc_range(block))
        if (op.getNumRegions() > 0)
          outline(&op, stage);
  }

private:
  void outline(Operation *nest, func::FuncOp stage);
  func::FuncOp createCandidate(Operation *nest, ArrayRef<Value> arguments,
                               ArrayRef<Value> constants);
  func::FuncOp getOrInsert(func::FuncOp candidate, func::FuncOp stage);

  SymbolTable symbols;
  /// The outlined functions by their printed form (under kCandidateName).
  llvm::StringMap<func::FuncOp> functions;
};

void NestOutliner::outline(Operation *nest, func::FuncOp stage) {
  SmallVector<Value> arguments, constants;
  for (Value value : getCapturedValues(nest))
    (isCopiedConstant(value) ? constants : arguments).push_back(value);
  func::FuncOp callee =
      getOrInsert(createCandidate(nest, arguments, constants), stage);
  OpBuilder builder(nest);
  auto call = func::CallOp::create(builder, nest->getLoc(), callee, arguments);
  nest->replaceAllUsesWith(call.getResults());
  nest->erase();
}

/// A function, not yet in the module, that computes `nest` from
/// `arguments`, with `constants` cloned into it.
func::FuncOp NestOutliner::createCandidate(Operation *nest,
                                           ArrayRef<Value> arguments,
                                           ArrayRef<Value> constants) {
  MLIRContext *context = nest->getContext();
  auto type = FunctionType::get(context, ValueRange(arguments).getTypes(),
                                nest->getResultTypes());
  auto fn = func::FuncOp::create(nest->getLoc(), kCandidateName, type);
  fn.setPrivate();
  // convert-func-to-llvm reads the linkage from this attribute.
  fn->setAttr("llvm.linkage",
              LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));
  // Kept out of line: inlined back, the nests would make one large function
  // again.
  fn->setAttr("passthrough",
              ArrayAttr::get(context, {StringAttr::get(context, "noinline")}));
  Block *body = fn.addEntryBlock();
  IRMapping mapping;
  mapping.map(arguments, body->getArguments());
  OpBuilder builder = OpBuilder::atBlockEnd(body);
  for (Value constant : constants)
    builder.clone(*constant.getDefiningOp(), mapping);
  Operation *clone = builder.clone(*nest, mapping);
  func::ReturnOp::create(builder, nest->getLoc(), clone->getResults());
  return fn;
}

/// The function in the module that computes what `candidate` does:
/// an earlier one of the same form, or `candidate` under a name of its own
/// derived from `stage`'s.
func::FuncOp NestOutliner::getOrInsert(func::FuncOp candidate,
                                       func::FuncOp stage) {
  std::string key;
  llvm::raw_string_ostream os(key);
  candidate->print(os, OpPrintingFlags().printGenericOpForm().assumeVerified());
  auto [it, inserted] = functions.try_emplace(key, candidate);
  if (!inserted) {
    candidate.erase();
    return it->second;
  }
  candidate.setSymName(
      (stage.getSymName() + "_nest" + Twine(functions.size() - 1)).str());
  symbols.insert(candidate); // Renames it unique.
  return candidate;
}

struct OutlineLoopNests : pp::impl::PPOutlineLoopNestsBase<OutlineLoopNests> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    NestOutliner outliner(module);
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (!fn.isDeclaration() && fn->hasAttr(pp::kStageAttr))
        outliner.outlineNests(fn);
  }
};

} // namespace
