//===- ScheduleToJSON.cpp - pp.schedule to pp-schedule-v1 JSON ------------===//
//
// Writes the JSON contract of shared/spec/schedule-json.md: the header
// fields, then each rank's ordered actions, one compact object per line so
// that the document stays readable and diffable.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleExport.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::pp;

/// Writes one action as {"op": ..., "stage": ..., "mb": ..., "peer": ...},
/// with the fields the spec gives its op, in the spec's order.
static void writeAction(Operation *op, raw_ostream &os) {
  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("op", getActionMnemonic(op));
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](ComputeOp compute) {
          json.attribute("stage", static_cast<int64_t>(compute.getStage()));
          json.attribute("mb", static_cast<int64_t>(compute.getMb()));
        })
        .Case<SendOp, RecvOp>([&](auto transfer) {
          json.attribute("stage", static_cast<int64_t>(transfer.getStage()));
          json.attribute("mb", static_cast<int64_t>(transfer.getMb()));
          json.attribute("peer", static_cast<int64_t>(transfer.getPeer()));
        })
        .Case<AllReduceOp, OptimizerStepOp>([&](auto action) {
          json.attribute("stage", static_cast<int64_t>(action.getStage()));
        });
  });
}

/// Writes `name: [v, ...]` on one line.
template <typename T>
static void writeCompactArray(llvm::json::OStream &json, StringRef name,
                              ArrayRef<T> values) {
  json.attributeBegin(name);
  json.rawValue([&](raw_ostream &os) {
    llvm::json::OStream compact(os);
    compact.array([&] {
      for (T value : values)
        compact.value(value);
    });
  });
  json.attributeEnd();
}

LogicalResult mlir::pp::exportScheduleToJSON(ScheduleOp schedule,
                                             raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("format", "pp-schedule-v1");
    json.attribute("name", schedule.getName());
    json.attribute("num_ranks", schedule.getNumRanks());
    json.attribute("num_stages", schedule.getNumStages());
    json.attribute("num_microbatches",
                   static_cast<int64_t>(schedule.getNumMicrobatches()));
    writeCompactArray(json, "stage_rank", schedule.getStageRank());
    if (CostAttr cost = schedule.getCostAttr())
      json.attributeObject("cost", [&] {
        writeCompactArray(json, "F", cost.getForward().asArrayRef());
        writeCompactArray(json, "B", cost.getBackwardInput().asArrayRef());
        writeCompactArray(json, "W", cost.getBackwardWeight().asArrayRef());
        json.attribute("comm", cost.getComm().getValueAsDouble());
        writeCompactArray(json, "activation",
                          cost.getActivation().asArrayRef());
        writeCompactArray(json, "weight_grad_stash",
                          cost.getStash().asArrayRef());
      });
    if (FloatAttr cap = schedule.getMemoryCapAttr())
      json.attribute("memory_cap", cap.getValueAsDouble());
    if (std::optional<uint64_t> replicas = schedule.getNumReplicas())
      json.attribute("num_replicas", static_cast<int64_t>(*replicas));
    json.attributeArray("ranks", [&] {
      for (RankOp rank : schedule.getBody().front().getOps<RankOp>()) {
        json.array([&] {
          for (Operation &op : rank.getBody().front())
            json.rawValue([&](raw_ostream &os) { writeAction(&op, os); });
        });
      }
    });
  });
  os << "\n";
  return success();
}
