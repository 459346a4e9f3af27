//===- ScheduleToJSON.cpp - pp.schedule to pp-schedule-v1 JSON ------------===//
//
// Writes the JSON contract of shared/spec/schedule-json.md: the header
// fields, then each rank's ordered actions, one compact object per line so
// that the document stays readable and diffable. The contract has no
// overlapped pairs, so a schedule with one is refused. Exchange groups and
// sequence slices travel in optional fields of pp's own
// (docs/Dialects/PP.md, docs/Seq1F1B.md).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleExport.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/JSON.h"

#include <charconv>
#include <cmath>

using namespace mlir;
using namespace mlir::pp;

/// Writes one action as {"op": ..., "stage": ..., "mb": ..., "peer": ...},
/// with the fields the spec gives its op, in the spec's order, and
/// `"grouped": true` on a transfer posted with the one before it.
static void writeAction(Operation *op, raw_ostream &os) {
  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("op", getActionName(op));
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](ComputeOp compute) {
          json.attribute("stage", static_cast<int64_t>(compute.getStage()));
          json.attribute("mb", static_cast<int64_t>(compute.getMb()));
        })
        .Case<SendOp, RecvOp>([&](auto transfer) {
          json.attribute("stage", static_cast<int64_t>(transfer.getStage()));
          json.attribute("mb", static_cast<int64_t>(transfer.getMb()));
          json.attribute("peer", static_cast<int64_t>(transfer.getPeer()));
          // pp's extension of the contract, written only where it holds, so
          // that a schedule without exchange groups is plain pp-schedule-v1.
          if (transfer.getGrouped())
            json.attribute("grouped", true);
        })
        .Case<AllReduceOp, ReduceScatterOp, AllGatherOp, OptimizerStepOp>(
            [&](auto action) {
              json.attribute("stage", static_cast<int64_t>(action.getStage()));
            });
  });
}

/// Writes a finite double in the shortest form that reads back exactly:
/// llvm::json writes 17 digits (0.1 as 0.10000000000000001) and infinity
/// as `inf`, which is not JSON. The op verifiers keep costs finite.
static void writeNumber(llvm::json::OStream &json, double value) {
  assert(std::isfinite(value) && "JSON has no infinity or NaN");
  char text[32];
  auto [end, error] = std::to_chars(std::begin(text), std::end(text), value);
  assert(error == std::errc() && "32 characters hold any double");
  json.rawValue(StringRef(text, end - text));
}

static void writeNumber(llvm::json::OStream &json, int64_t value) {
  json.value(value);
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
        writeNumber(compact, value);
    });
  });
  json.attributeEnd();
}

LogicalResult mlir::pp::exportScheduleToJSON(ScheduleOp schedule,
                                             raw_ostream &os) {
  // The contract times every action on its own; an overlapped pair would
  // silently lose its concurrency.
  WalkResult overlap = schedule.walk([](ComputeOp compute) {
    if (!compute.getOverlap())
      return WalkResult::advance();
    compute.emitOpError("runs overlapped with the forward before it, which "
                        "pp-schedule-v1 cannot express; export it as a "
                        "PyTorch CSV instead");
    return WalkResult::interrupt();
  });
  if (overlap.wasInterrupted())
    return failure();
  // Imported again, the costs would lose their micro-batch tables.
  if (CostAttr cost = schedule.getCostAttr();
      cost && cost.getNumMicrobatches() != 0)
    return schedule.emitOpError("has per-micro-batch costs, which "
                                "pp-schedule-v1 cannot express");
  // Imported again, the schedule would train synchronously.
  if (schedule.getNumWeightVersions() != 1)
    return schedule.emitOpError("keeps ")
           << schedule.getNumWeightVersions()
           << " weight versions (pipedream-2bw), which pp-schedule-v1 "
              "cannot express";
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
        // Each phase's times under its action's name.
        auto name = [](Phase phase) {
          return getActionSpelling(getComputeAction(phase)).json;
        };
        writeCompactArray(json, name(Phase::forward),
                          cost.getForward().asArrayRef());
        writeCompactArray(json, name(Phase::backward_input),
                          cost.getBackwardInput().asArrayRef());
        writeCompactArray(json, name(Phase::backward_weight),
                          cost.getBackwardWeight().asArrayRef());
        json.attributeBegin("comm");
        writeNumber(json, cost.getComm().getValueAsDouble());
        json.attributeEnd();
        writeCompactArray(json, "activation",
                          cost.getActivation().asArrayRef());
        writeCompactArray(json, "weight_grad_stash",
                          cost.getStash().asArrayRef());
      });
    // One number for every rank, or one per rank, as the schedule has it.
    Attribute cap = schedule.getMemoryCapAttr();
    if (auto all = dyn_cast_if_present<FloatAttr>(cap)) {
      json.attributeBegin("memory_cap");
      writeNumber(json, all.getValueAsDouble());
      json.attributeEnd();
    } else if (auto perRank = dyn_cast_if_present<DenseF64ArrayAttr>(cap)) {
      writeCompactArray(json, "memory_cap", perRank.asArrayRef());
    }
    if (std::optional<uint64_t> replicas = schedule.getNumReplicas())
      json.attribute("num_replicas", static_cast<int64_t>(*replicas));
    // pp's extension: the actions' `mb` index sequence slices.
    if (std::optional<uint64_t> slices = schedule.getSlices())
      json.attribute("slices", static_cast<int64_t>(*slices));
    if (std::optional<uint64_t> zero = schedule.getZero())
      json.attribute("zero", static_cast<int64_t>(*zero));
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
