//===- ScheduleToASCII.cpp - pp.schedule to a terminal timeline -----------===//
//
// Draws the unit-cost timeline of a schedule for a terminal: a time ruler,
// one row per rank with one fixed-width cell per time unit, and a footer with
// the makespan and each rank's bubble (idle) fraction. Times come from
// ScheduleSimulator, like the Chrome trace; transfers, all-reduces and
// optimizer steps take no time and are not drawn. An overlapped pair is one
// span labelled with both computations.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleExport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// Cells are at least this wide: a one-unit label such as "F0" and a space.
static constexpr int64_t kMinCellWidth = 3;

/// A ruler mark every this many time units.
static constexpr int64_t kRulerStep = 5;

namespace {
/// A computation on a rank's row, in whole time units.
struct ComputeSpan {
  int64_t start;
  int64_t end;
  std::string label;
};
} // namespace

/// "F3" for forward on micro-batch 3, "BW0"; "F1.3" (stage 1) where a rank
/// runs more than one stage, since the micro-batch alone is then ambiguous.
static std::string getSpanLabel(ComputeOp compute, bool withStage) {
  if (withStage)
    return llvm::formatv("{0}{1}.{2}", getActionName(compute),
                         compute.getStage(), compute.getMb())
        .str();
  return llvm::formatv("{0}{1}", getActionName(compute), compute.getMb()).str();
}

/// The cell width that fits every label in its span with a space after it,
/// so that adjacent spans stay apart.
static int64_t getCellWidth(ArrayRef<SmallVector<ComputeSpan>> rows) {
  int64_t width = kMinCellWidth;
  for (const SmallVector<ComputeSpan> &row : rows)
    for (const ComputeSpan &span : row)
      width = std::max<int64_t>(
          width, llvm::divideCeil(span.label.size() + 1,
                                  std::max<int64_t>(span.end - span.start, 1)));
  return width;
}

/// The time of every kRulerStep-th unit, above the first cell of that unit.
static std::string getRuler(int64_t makespan, int64_t cellWidth) {
  std::string ruler(makespan * cellWidth, ' ');
  for (int64_t t = 0; t < makespan; t += kRulerStep) {
    std::string mark = std::to_string(t);
    size_t column = t * cellWidth;
    if (column + mark.size() > ruler.size())
      break;
    ruler.replace(column, mark.size(), mark);
  }
  return StringRef(ruler).rtrim().str();
}

LogicalResult mlir::pp::exportScheduleToASCII(ScheduleOp schedule,
                                              raw_ostream &os) {
  ScheduleSimulator simulator(schedule);
  if (failed(simulator.runForTimeline(schedule)))
    return failure();

  int64_t numRanks = simulator.getNumRanks();
  bool withStage = schedule.getNumStages() > numRanks;
  // Unit costs are whole numbers, so rounding only drops floating-point
  // noise.
  auto toUnits = [](double time) {
    return static_cast<int64_t>(std::llround(time));
  };
  int64_t makespan = toUnits(simulator.getMakespan());

  SmallVector<SmallVector<ComputeSpan>> rows(numRanks);
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    for (auto [op, interval] : llvm::zip_equal(simulator.getActions(rank),
                                               simulator.getIntervals(rank))) {
      auto compute = dyn_cast<ComputeOp>(op);
      int64_t start = toUnits(interval.start), end = toUnits(interval.end);
      if (!compute || end == start)
        continue;
      std::string label = getSpanLabel(compute, withStage);
      // An overlapped pair shares one span, "F0.3+BW3.1".
      if (compute.getOverlapPartner() && !rows[rank].empty() &&
          rows[rank].back().start == start) {
        rows[rank].back().end = std::max(rows[rank].back().end, end);
        rows[rank].back().label += "+" + label;
        continue;
      }
      rows[rank].push_back({start, end, std::move(label)});
    }
  }
  int64_t cellWidth = getCellWidth(rows);

  // "rank 0 |" ... "rank 11 |" with the bars aligned.
  size_t rankWidth = std::to_string(std::max<int64_t>(numRanks - 1, 0)).size();
  os << llvm::left_justify("time", rankWidth + 5) << " |"
     << getRuler(makespan, cellWidth) << "\n";

  SmallVector<int64_t> idle(numRanks, makespan);
  for (auto [rank, row] : llvm::enumerate(rows)) {
    os << "rank " << llvm::right_justify(std::to_string(rank), rankWidth)
       << " |";
    int64_t time = 0;
    for (const ComputeSpan &span : row) {
      for (; time < span.start; ++time)
        os << llvm::left_justify(".", cellWidth);
      os << llvm::left_justify(span.label, (span.end - span.start) * cellWidth);
      idle[rank] -= span.end - span.start;
      time = span.end;
    }
    for (; time < makespan; ++time)
      os << llvm::left_justify(".", cellWidth);
    os << "|\n";
  }

  os << "makespan " << makespan << ", bubble:";
  for (auto [rank, idleUnits] : llvm::enumerate(idle)) {
    double fraction = makespan ? 100.0 * idleUnits / makespan : 0.0;
    os << (rank ? ", " : " ") << "rank " << rank << " "
       << llvm::format("%.1f%%", fraction);
  }
  os << "\n";
  return success();
}
