//===- Program.h - a pipeline program on plain data --------------*- C++
//-*-===//
//
// A schedule as the program every rank runs (the content of a `pp.schedule`
// after pp-insert-transfers): each rank's actions in order, where each stage
// runs, how transfers synchronise, what actions cost and how much memory a
// rank may hold; and `verify`, the one definition of a correct program,
// which returns every violation it finds, each at the action, rank or
// program it concerns.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_PROGRAM_H
#define PP_SCHEDULING_PROGRAM_H

#include "pp/Scheduling/ScheduleTiming.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::pp::sched {

/// One action of a rank: what the timing model runs, and the steps of a
/// run it belongs to (no-flush schedules).
struct ProgramAction : TimedAction {
  StepPart part = StepPart::every;
};

/// What every rank runs in one step.
struct Program {
  int64_t numStages = 0;
  int64_t numMicrobatches = 0;
  /// The rank of each stage.
  llvm::SmallVector<int64_t> stageRank;
  /// Each rank's actions, in order.
  llvm::SmallVector<llvm::SmallVector<ProgramAction>> ranks;
  /// How the transfers synchronise: under rendezvous semantics the program
  /// must also run to the end when a send waits for its receive.
  TransferSemantics semantics = TransferSemantics::async;
  /// What the stages cost (unit costs when none).
  std::optional<StageCosts> cost;
  /// The activation memory each rank may hold (no cap when empty), and what
  /// each rank holds besides activations (nothing when empty): weights,
  /// gradients, optimizer state.
  llvm::SmallVector<double> memoryCap;
  llvm::SmallVector<double> staticMemory;
  /// Sequence slices per micro-batch (Seq1F1B).
  int64_t numSlices = 1;
  /// Data-parallel replicas the program runs as, and the ZeRO stage of
  /// each stage (1: gradients summed with reduce-scatter and weights spread
  /// by all-gather): one level for every stage, or one per stage; none
  /// means 0 everywhere.
  int64_t numReplicas = 1;
  llvm::SmallVector<int64_t, 1> zeroStages;
  /// Under ZeRO-3, whether each compute gathers the params it reads rather
  /// than each stage its weights once per step: one for every stage, or one
  /// per stage; none means never.
  llvm::SmallVector<bool, 1> gatherPerParam;
  /// Whether the ranks move data with sends and receives (a schedule after
  /// pp-insert-transfers). Without them (a generated schedule) the ranks
  /// hold compute actions only, each waits for its inputs from other ranks
  /// itself, and the actions for the next step (no-flush schedules) belong
  /// to the next run: they must be the forwards the first step alone runs.
  bool explicitTransfers = true;

  int64_t getNumRanks() const { return ranks.size(); }
  /// The ZeRO stage of `stage`.
  int64_t getZeroStage(int64_t stage) const {
    return getPerStage<int64_t>(zeroStages, stage, 0);
  }
  /// Whether `stage` gathers its params per compute (ZeRO-3 per param).
  bool gathersPerParam(int64_t stage) const {
    return getPerStage<bool>(gatherPerParam, stage, false);
  }

private:
  template <typename T>
  static T getPerStage(llvm::ArrayRef<T> values, int64_t stage, T fallback) {
    if (values.empty())
      return fallback;
    return values.size() == 1 ? values.front() : values[stage];
  }
};

/// Where a violation is reported: an action (its rank and its index in the
/// rank's list), a whole rank (`action` -1), or the program (`rank` -1).
struct ProgramSite {
  int64_t rank = -1;
  int64_t action = -1;

  bool isAction() const { return rank >= 0 && action >= 0; }
  bool operator==(const ProgramSite &other) const {
    return rank == other.rank && action == other.action;
  }
};

/// One way a program is wrong.
struct Violation {
  /// Something said about another site (or, without one, about this
  /// violation).
  struct Note {
    std::optional<ProgramSite> site;
    std::string message;
  };
  ProgramSite site;
  std::string message;
  /// Whether the message is about the op at `site` itself, which a
  /// diagnostic prefixes with the op's name.
  bool aboutOp = true;
  llvm::SmallVector<Note, 1> notes;
};

/// Every way `program` is wrong, in a fixed order: costs, placement and
/// actions within the program's stages, ranks and micro-batches (nothing
/// else is checked otherwise), every action on its stage's rank, transfers
/// between neighbouring stages on different ranks, each forward and backward
/// (fused, or B and W) of every stage and micro-batch exactly once, every
/// action after what it depends on (its inputs, sequence slices, the gradients
/// a collective or optimizer step uses), ZeRO's collectives where the program
/// asks for them, each transfer matched, the ranks running to the end (deadlock
/// freedom, under rendezvous semantics too where the program runs with them)
/// and no rank above its memory cap. Checks whose answer would only repeat an
/// earlier violation are skipped. Empty for a correct program.
std::vector<Violation> verify(const Program &program);

/// After a run of `timing` (actions set by setActions) that deadlocked, the
/// deadlock: at the transfer the lowest blocked rank waits at, naming the
/// chain of ranks that wait for each other, with a note at each other
/// blocked transfer in the chain. `sites[i]` is where the timing's action i
/// is in the program.
Violation getDeadlock(const ScheduleTiming &timing,
                      ArrayRef<ProgramSite> sites);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_PROGRAM_H
