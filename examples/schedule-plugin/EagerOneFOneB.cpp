//===- EagerOneFOneB.cpp - a schedule brought by a pass plugin ------------===//
//
// An out-of-tree schedule (docs/Tutorials/NewSchedule.md): 1F1B with one
// more warm-up forward on every rank but the last, so that a rank has a
// forward to run while the gradient it waits for is in flight. Loaded with
//
//   pp-opt --load-pass-plugin=build/lib/PPSchedulePlugin.so \
//     --pp-schedule="schedule=1f1b-eager ..."
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// Rank r runs p - r forwards before its first backward, one more than
/// 1F1B's p - r - 1, except the last rank, whose backward needs no
/// transfer.
static llvm::Expected<GeneratedSchedule>
generateEagerOneFOneB(const ScheduleProblem &problem) {
  if (llvm::Error error = requireOneStagePerRank(problem, "1f1b-eager"))
    return std::move(error);
  int64_t p = problem.numStages;
  SmallVector<SmallVector<ScheduledAction>> ranks(p);
  for (int64_t stage = 0; stage < p; ++stage) {
    int64_t warmup = stage == p - 1 ? 0 : p - stage;
    appendOneFOneBSteps(ranks[stage], problem, stage, warmup);
  }
  return GeneratedSchedule{identityPlacement(problem), std::move(ranks)};
}

/// Adds the plugin's schedules to those pp-schedule knows.
static void registerSchedules() {
  if (failed(registerScheduleGenerator({"1f1b-eager", generateEagerOneFOneB})))
    llvm::errs() << "PPSchedulePlugin: a schedule named '1f1b-eager' is "
                    "already registered\n";
}

/// The entry point pp-opt --load-pass-plugin looks up.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "PPSchedulePlugin", LLVM_VERSION_STRING,
          registerSchedules};
}
