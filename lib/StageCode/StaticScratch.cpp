//===- StaticScratch.cpp - fixed-size temporaries without the heap --------===//
//
// pp-static-scratch: moves the fixed-size temporaries of functions that
// return no buffers into static buffers (or onto the stack when small), so
// that a stage call does no heap allocation; temporaries of one type whose
// lifetimes do not overlap share a buffer.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <queue>

namespace mlir::pp {
#define GEN_PASS_DEF_PPSTATICSCRATCH
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

/// The largest temporary pp-static-scratch may put on the stack: far below
/// the 8 MiB of a main thread, with room for the other frames.
constexpr int64_t kMaxStackBytes = int64_t(1) << 20;

/// The size of a buffer `alloc` creates, if it is a dense buffer of a static
/// shape and a scalar element type whose size is known.
std::optional<int64_t> getStaticBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrFloat() || type.getMemorySpace())
    return std::nullopt;
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return type.getNumElements() * llvm::divideCeil(bits, 8);
}

/// A function may keep temporaries across calls only if none escapes it
/// through its results.
bool returnsBuffers(func::FuncOp fn) {
  return llvm::any_of(fn.getResultTypes(), llvm::IsaPred<BaseMemRefType>);
}

/// The position in `entry` of the last op that uses the buffer `alloc`
/// makes, directly, in a nested region or through a view; nullopt when the
/// buffer may be used later: it reaches an op that is neither a view nor a
/// plain use (a call, a terminator, an op returning a buffer or a tensor).
std::optional<unsigned>
getLastUse(memref::AllocOp alloc, Block &entry,
           const DenseMap<Operation *, unsigned> &positions) {
  unsigned last = positions.lookup(alloc);
  SmallVector<Value> aliases = {alloc.getResult()};
  while (!aliases.empty()) {
    Value alias = aliases.pop_back_val();
    for (Operation *user : alias.getUsers()) {
      if (isa<memref::DeallocOp>(user))
        continue;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == alias) {
        llvm::append_range(aliases, user->getResults());
        continue;
      }
      if (isa<CallOpInterface>(user) ||
          user->hasTrait<OpTrait::IsTerminator>() ||
          llvm::any_of(user->getResultTypes(),
                       llvm::IsaPred<BaseMemRefType, TensorType>))
        return std::nullopt;
      Operation *ancestor = entry.findAncestorOpInBlock(*user);
      if (!ancestor)
        return std::nullopt;
      last = std::max(last, positions.lookup(ancestor));
    }
  }
  return last;
}

/// Static buffers of one memref type, each free once the last use of its
/// current temporary is behind.
struct BufferPool {
  /// (last use of the current temporary, buffer), soonest free first.
  std::priority_queue<std::pair<unsigned, memref::GlobalOp>,
                      std::vector<std::pair<unsigned, memref::GlobalOp>>,
                      llvm::on_first<std::greater<unsigned>>>
      busy;
  /// Free buffers, the most recently freed (warmest in cache) last.
  SmallVector<memref::GlobalOp> free;

  /// A buffer free at `position`, if any.
  memref::GlobalOp take(unsigned position) {
    while (!busy.empty() && busy.top().first < position) {
      free.push_back(busy.top().second);
      busy.pop();
    }
    return free.empty() ? memref::GlobalOp() : free.pop_back_val();
  }
};

struct StaticScratch : pp::impl::PPStaticScratchBase<StaticScratch> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A stack buffer beyond a thread's few megabytes crashes the program;
    // an alignment of 0 or -1 was taken as 1, 3 made invalid IR.
    if (maxStackBytes < 0 || maxStackBytes > kMaxStackBytes) {
      module.emitError() << "pp-static-scratch: max-stack-bytes must be "
                            "between 0 and "
                         << kMaxStackBytes << ", got "
                         << maxStackBytes.getValue();
      return signalPassFailure();
    }
    if (alignment < 1 || alignment > 4096 || !llvm::isPowerOf2_64(alignment)) {
      module.emitError() << "pp-static-scratch: alignment must be a power of "
                            "two between 1 and 4096, got "
                         << alignment.getValue();
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (!fn.isDeclaration() && !returnsBuffers(fn))
        placeTemporaries(fn, symbols);
  }

  /// Rewrites the allocations in the entry block of `fn`: inner blocks may
  /// run more than once per call with their buffers alive at once.
  /// A static buffer is shared by temporaries of its type whose lifetimes
  /// (from the allocation to the last use) do not overlap.
  void placeTemporaries(func::FuncOp fn, SymbolTable &symbols) {
    Block &entry = fn.getBody().front();
    DenseMap<Operation *, unsigned> positions;
    for (auto [position, op] : llvm::enumerate(entry))
      positions[&op] = position;
    DenseMap<Type, BufferPool> pools;
    auto allocs = llvm::to_vector(entry.getOps<memref::AllocOp>());
    for (memref::AllocOp alloc : allocs) {
      std::optional<int64_t> bytes = getStaticBytes(alloc);
      if (!bytes)
        continue;
      OpBuilder builder(alloc);
      Value buffer;
      if (*bytes <= maxStackBytes) {
        buffer = createStackBuffer(builder, alloc);
      } else {
        BufferPool &pool = pools[alloc.getType()];
        memref::GlobalOp global = pool.take(positions.lookup(alloc));
        if (!global)
          global = createStaticBuffer(alloc, fn, symbols);
        if (std::optional<unsigned> last = getLastUse(alloc, entry, positions))
          pool.busy.emplace(*last, global);
        buffer = memref::GetGlobalOp::create(
            builder, alloc.getLoc(), alloc.getType(), global.getSymName());
      }
      for (Operation *user : llvm::to_vector(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      alloc.replaceAllUsesWith(buffer);
      alloc.erase();
    }
  }

  Value createStackBuffer(OpBuilder &builder, memref::AllocOp alloc) {
    return memref::AllocaOp::create(builder, alloc.getLoc(), alloc.getType(),
                                    builder.getI64IntegerAttr(getAlignment()));
  }

  memref::GlobalOp createStaticBuffer(memref::AllocOp alloc, func::FuncOp fn,
                                      SymbolTable &symbols) {
    OpBuilder moduleBuilder(fn);
    auto global = memref::GlobalOp::create(
        moduleBuilder, alloc.getLoc(),
        moduleBuilder.getStringAttr(
            llvm::formatv("__pp_scratch_{0}", fn.getSymName()).str()),
        moduleBuilder.getStringAttr("private"), TypeAttr::get(alloc.getType()),
        /*initial_value=*/moduleBuilder.getUnitAttr(), /*constant=*/UnitAttr(),
        moduleBuilder.getI64IntegerAttr(getAlignment()));
    symbols.insert(global); // Renames it unique.
    return global;
  }

  int64_t getAlignment() { return alignment; }
};

} // namespace
