//===- OutlineLoopNests.cpp - stage code as calls of shared loop nests ----===//
//
// pp-outline-loop-nests: moves each loop nest of a stage function into a
// private function, one per distinct nest, so that LLVM's work grows with
// the distinct nests and not with the size of one function holding them all.
// The buffers no call passes overlapping another it writes become `noalias`
// pointers, which the nest had known inside its caller.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

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

/// The buffer `value` is a view of: the value no view-like op defines.
Value getBufferRoot(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Whether `root` is a buffer no other root can be: a fresh allocation.
bool isFreshAllocation(Value root) {
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>();
}

bool isFunctionArgument(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  return argument && argument.getOwner()->isEntryBlock() &&
         isa<func::FuncOp>(argument.getOwner()->getParentOp());
}

/// The runtime buffer (pp.slot) a stage function's argument lives in.
std::optional<pp::Slot> getSlot(Value value) {
  if (!isFunctionArgument(value))
    return std::nullopt;
  auto argument = cast<BlockArgument>(value);
  auto fn = cast<func::FuncOp>(argument.getOwner()->getParentOp());
  auto slot =
      fn.getArgAttrOfType<pp::SlotAttr>(argument.getArgNumber(), pp::kSlotAttr);
  if (!slot)
    return std::nullopt;
  return slot.getSlot();
}

/// Whether the buffers rooted at `a` and `b` (getBufferRoot) may overlap.
/// Distinct: a fresh allocation and any other root, two different globals,
/// a private global and a stage function's argument (the runtime's buffer
/// cannot be the module's private global), and arguments in different
/// runtime slots (each slot is a buffer of its own).
bool mayOverlap(Value a, Value b, SymbolTable &symbols) {
  if (a == b)
    return true;
  std::optional<pp::Slot> slotA = getSlot(a), slotB = getSlot(b);
  if (slotA && slotB &&
      std::tie(slotA->kind, slotA->stage, slotA->index) !=
          std::tie(slotB->kind, slotB->stage, slotB->index))
    return false;
  if (isFreshAllocation(a) || isFreshAllocation(b))
    return false;
  auto globalA = a.getDefiningOp<memref::GetGlobalOp>();
  auto globalB = b.getDefiningOp<memref::GetGlobalOp>();
  if (globalA && globalB)
    return globalA.getName() == globalB.getName();
  auto isPrivateGlobal = [&](memref::GetGlobalOp get) {
    Operation *global = get ? symbols.lookup(get.getName()) : nullptr;
    return global && SymbolTable::getSymbolVisibility(global) ==
                         SymbolTable::Visibility::Private;
  };
  if ((isPrivateGlobal(globalA) && isFunctionArgument(b)) ||
      (isPrivateGlobal(globalB) && isFunctionArgument(a)))
    return false;
  return true;
}

/// Whether the bare-pointer calling convention can pass `type`: a memref
/// whose shape, strides and offset are static.
bool isBarePointerBuffer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(memref.getStridesAndOffset(strides, offset)) &&
         ShapedType::isStatic(offset) &&
         llvm::all_of(strides, ShapedType::isStatic);
}

/// Which arguments of `fn` it writes through; std::nullopt when it touches
/// memory that is not its arguments' (or writes without saying where).
std::optional<llvm::BitVector> getWrittenArguments(func::FuncOp fn) {
  llvm::BitVector written(fn.getNumArguments());
  WalkResult result = fn.getBody().walk([&](Operation *op) {
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface)
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects) {
      if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value)
        return WalkResult::interrupt();
      Value root = getBufferRoot(value);
      if (isFreshAllocation(root))
        continue;
      auto argument = dyn_cast<BlockArgument>(root);
      if (!argument || argument.getOwner()->getParentOp() != fn)
        return WalkResult::interrupt();
      if (isa<MemoryEffects::Write>(effect.getEffect()))
        written.set(argument.getArgNumber());
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  return written;
}

/// Marks the buffer arguments of the outlined `fn` that no call in `calls`
/// passes overlapping another argument, where either is written, with
/// `llvm.noalias`, under the bare-pointer calling convention (one pointer
/// per buffer, which keeps the attribute through convert-func-to-llvm).
void markDistinctBuffers(func::FuncOp fn, ArrayRef<func::CallOp> calls,
                         SymbolTable &symbols) {
  if (!llvm::all_of(fn.getArgumentTypes(),
                    [](Type type) {
                      return !isa<BaseMemRefType>(type) ||
                             isBarePointerBuffer(type);
                    }) ||
      llvm::any_of(fn.getResultTypes(), llvm::IsaPred<BaseMemRefType>))
    return;
  std::optional<llvm::BitVector> written = getWrittenArguments(fn);
  if (!written)
    return;
  unsigned count = fn.getNumArguments();
  llvm::BitVector distinct(count);
  for (unsigned i = 0; i < count; ++i)
    distinct[i] = isa<MemRefType>(fn.getArgumentTypes()[i]);
  for (func::CallOp call : calls) {
    SmallVector<Value> roots = llvm::map_to_vector(
        call.getOperands(), [](Value v) { return getBufferRoot(v); });
    for (unsigned i = 0; i < count; ++i)
      for (unsigned j = i + 1; j < count; ++j)
        if (((*written)[i] || (*written)[j]) &&
            isa<MemRefType>(roots[i].getType()) &&
            isa<MemRefType>(roots[j].getType()) &&
            mayOverlap(roots[i], roots[j], symbols))
          distinct.reset(i), distinct.reset(j);
  }
  if (distinct.none())
    return;
  MLIRContext *context = fn.getContext();
  fn->setAttr("llvm.bareptr", UnitAttr::get(context));
  for (unsigned i : distinct.set_bits())
    fn.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                  UnitAttr::get(context));
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

  /// After every stage is outlined: the outlined functions' noalias buffers.
  void markDistinctBuffers() {
    for (auto &[fn, fnCalls] : calls)
      ::markDistinctBuffers(fn, fnCalls, symbols);
  }

private:
  void outline(Operation *nest, func::FuncOp stage);
  func::FuncOp createCandidate(Operation *nest, ArrayRef<Value> arguments,
                               ArrayRef<Value> constants);
  func::FuncOp getOrInsert(func::FuncOp candidate, func::FuncOp stage);

  SymbolTable symbols;
  /// The outlined functions by their printed form (under kCandidateName).
  llvm::StringMap<func::FuncOp> functions;
  /// Every call of each outlined function, in the order they were made.
  llvm::MapVector<func::FuncOp, SmallVector<func::CallOp>> calls;
};

void NestOutliner::outline(Operation *nest, func::FuncOp stage) {
  SmallVector<Value> arguments, constants;
  for (Value value : getCapturedValues(nest))
    (isCopiedConstant(value) ? constants : arguments).push_back(value);
  func::FuncOp callee =
      getOrInsert(createCandidate(nest, arguments, constants), stage);
  OpBuilder builder(nest);
  auto call = func::CallOp::create(builder, nest->getLoc(), callee, arguments);
  calls[callee].push_back(call);
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
    SmallVector<func::FuncOp> stages;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isDeclaration() && fn->hasAttr(pp::kStageAttr))
        stages.push_back(fn);
    // The functions something refers to (a schedule's actions) first: a
    // nest shared with a function nothing runs is named after one that runs.
    DenseSet<StringAttr> referenced;
    if (auto uses = SymbolTable::getSymbolUses(&module.getBodyRegion()))
      for (const SymbolTable::SymbolUse &use : *uses)
        referenced.insert(use.getSymbolRef().getRootReference());
    std::stable_partition(stages.begin(), stages.end(), [&](func::FuncOp fn) {
      return referenced.contains(fn.getSymNameAttr());
    });
    for (func::FuncOp fn : stages)
      outliner.outlineNests(fn);
    outliner.markDistinctBuffers();
  }
};

} // namespace
