//===- ScheduleToChromeTrace.cpp - pp.schedule to a Chrome trace ----------===//
//
// Writes the unit-cost timeline of a schedule as Chrome trace event JSON
// (chrome://tracing, Perfetto): one thread per rank, one complete event per
// action. Times come from ScheduleSimulator, the same execution model the
// verifier checks deadlock freedom with; one cost unit is one millisecond.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleExport.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// Trace timestamps are in microseconds.
static constexpr double kMicrosecondsPerUnit = 1000.0;

/// "F0.3" for forward of stage 0 on micro-batch 3, "SEND_B2.1", "OPT1".
static std::string getEventName(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<ComputeOp, SendOp, RecvOp>([](auto action) {
        return llvm::formatv("{0}{1}.{2}", getActionName(action),
                             action.getStage(), action.getMb())
            .str();
      })
      .Case<AllReduceOp, ReduceScatterOp, AllGatherOp, OptimizerStepOp>(
          [](auto action) {
            return llvm::formatv("{0}{1}", getActionName(action),
                                 action.getStage())
                .str();
          })
      .Default(
          [](Operation *op) { return op->getName().getStringRef().str(); });
}

static StringRef getEventCategory(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case([](SendOp) { return "send"; })
      .Case([](RecvOp) { return "recv"; })
      .Case<AllReduceOp, ReduceScatterOp, AllGatherOp>(
          [](Operation *) { return "collective"; })
      .Default([](Operation *) { return "compute"; });
}

/// The action's fields, for the event's details pane.
static void writeEventArgs(Operation *op, llvm::json::OStream &json) {
  json.attributeObject("args", [&] {
    llvm::TypeSwitch<Operation *>(op)
        .Case<ComputeOp, SendOp, RecvOp>([&](auto action) {
          json.attribute("stage", static_cast<int64_t>(action.getStage()));
          json.attribute("mb", static_cast<int64_t>(action.getMb()));
          // Which slice of which micro-batch `mb` is (Seq1F1B).
          auto schedule = action->template getParentOfType<ScheduleOp>();
          if (int64_t slices = schedule.getNumSlices(); slices > 1) {
            json.attribute("microbatch",
                           static_cast<int64_t>(action.getMb()) / slices);
            json.attribute("slice",
                           static_cast<int64_t>(action.getMb()) % slices);
          }
        })
        .Case<AllReduceOp, ReduceScatterOp, AllGatherOp, OptimizerStepOp>(
            [&](auto action) {
              json.attribute("stage", static_cast<int64_t>(action.getStage()));
            });
    if (auto send = dyn_cast<SendOp>(op))
      json.attribute("peer", static_cast<int64_t>(send.getPeer()));
    if (auto recv = dyn_cast<RecvOp>(op))
      json.attribute("peer", static_cast<int64_t>(recv.getPeer()));
  });
}

/// Writes one event object on its own line of the surrounding array.
template <typename Fn>
static void writeEvent(llvm::json::OStream &json, Fn &&fields) {
  json.rawValue([&](raw_ostream &os) {
    llvm::json::OStream event(os);
    event.object([&] { fields(event); });
  });
}

LogicalResult mlir::pp::exportScheduleToChromeTrace(ScheduleOp schedule,
                                                    raw_ostream &os) {
  ScheduleSimulator simulator(schedule);
  if (failed(simulator.runForTimeline(schedule)))
    return failure();

  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("displayTimeUnit", "ms");
    json.attributeObject("otherData", [&] {
      json.attribute("schedule", schedule.getSymName());
      json.attribute("name", schedule.getName());
      json.attribute("makespan", simulator.getMakespan());
    });
    json.attributeArray("traceEvents", [&] {
      writeEvent(json, [&](llvm::json::OStream &event) {
        event.attribute("name", "process_name");
        event.attribute("ph", "M");
        event.attribute("pid", 0);
        event.attributeObject("args", [&] {
          event.attribute("name", llvm::formatv("pp.schedule @{0} ({1})",
                                                schedule.getSymName(),
                                                schedule.getName())
                                      .str());
        });
      });
      for (int64_t rank = 0, e = simulator.getNumRanks(); rank < e; ++rank) {
        writeEvent(json, [&](llvm::json::OStream &event) {
          event.attribute("name", "thread_name");
          event.attribute("ph", "M");
          event.attribute("pid", 0);
          event.attribute("tid", rank);
          event.attributeObject("args", [&] {
            event.attribute("name", llvm::formatv("rank {0}", rank).str());
          });
        });
      }
      for (int64_t rank = 0, e = simulator.getNumRanks(); rank < e; ++rank) {
        for (auto [op, interval] : llvm::zip_equal(
                 simulator.getActions(rank), simulator.getIntervals(rank))) {
          writeEvent(json, [&](llvm::json::OStream &event) {
            event.attribute("name", getEventName(op));
            event.attribute("cat", getEventCategory(op));
            event.attribute("ph", "X");
            event.attribute("pid", 0);
            event.attribute("tid", rank);
            event.attribute("ts", interval.start * kMicrosecondsPerUnit);
            event.attribute("dur", (interval.end - interval.start) *
                                       kMicrosecondsPerUnit);
            writeEventArgs(op, event);
          });
        }
      }
    });
  });
  os << "\n";
  return success();
}
