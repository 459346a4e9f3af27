//===- LowerRandomSeeds.cpp - per-op seeds for torch-mlir's random ops ----===//
//
// pp-lower-random-seeds: replaces each advance of torch-mlir's global random
// seed (an ml_program global loaded, advanced and stored back) by a
// pp.random_seed of its own, so that a random op's numbers depend on the
// step, replica, micro-batch and op only, not on how often stage functions
// ran.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Import/Passes.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPLOWERRANDOMSEEDS
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// Erases `op` and then each operand's definition that is left unused.
static void eraseWithDeadOperands(Operation *op) {
  SmallVector<Operation *> worklist{op};
  while (!worklist.empty()) {
    Operation *dead = worklist.pop_back_val();
    SmallVector<Value> operands(dead->getOperands());
    dead->erase();
    for (Value operand : operands)
      if (Operation *def = operand.getDefiningOp();
          def && isOpTriviallyDead(def)) // loads of the global included
        worklist.push_back(def);
  }
}

/// The seed `store` writes back when it is torch-mlir's advance of a global
/// seed: `tensor.insert %next into %loaded[]` of the same global's load.
static Value advancedSeed(ml_program::GlobalStoreOp store) {
  auto insert = store.getValue().getDefiningOp<tensor::InsertOp>();
  if (!insert || !insert.getIndices().empty())
    return Value();
  auto load = insert.getDest().getDefiningOp<ml_program::GlobalLoadOp>();
  if (!load || load.getGlobal() != store.getGlobal())
    return Value();
  return insert.getScalar();
}

namespace {

struct LowerRandomSeeds : pp::impl::PPLowerRandomSeedsBase<LowerRandomSeeds> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t next = 0;
    WalkResult result = module.walk([&](ml_program::GlobalStoreOp store) {
      Value seed = advancedSeed(store);
      if (!seed) {
        store.emitError("pp-lower-random-seeds: mutable global state is "
                        "supported only as torch-mlir's random seed");
        return WalkResult::interrupt();
      }
      OpBuilder builder(seed.getDefiningOp());
      Value fresh =
          pp::RandomSeedOp::create(builder, seed.getLoc(), next++).getSeed();
      Operation *insert = store.getValue().getDefiningOp();
      seed.replaceAllUsesExcept(fresh, insert);
      eraseWithDeadOperands(store);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // Every read of a global seed went with its advance.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
      auto global = dyn_cast<ml_program::GlobalOp>(op);
      if (!global)
        continue;
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(global.getSymNameAttr(), module);
      if (uses && !uses->empty()) {
        uses->begin()->getUser()->emitError(
            "pp-lower-random-seeds: reads the global '")
            << global.getSymName()
            << "' otherwise than to advance a random seed";
        return signalPassFailure();
      }
      global.erase();
    }
  }
};

} // namespace
