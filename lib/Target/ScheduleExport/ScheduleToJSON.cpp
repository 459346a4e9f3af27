//===- ScheduleToJSON.cpp - pp.schedule to pp-schedule-v1 JSON ------------===//
//
// Writes the JSON contract of docs/ScheduleJSON.md from the program
// the schedule adapter reads: the header fields, then each rank's ordered
// actions, one compact object per line so
// that the document stays readable and diffable. The contract has no
// overlapped pairs, so a schedule with one is refused. Exchange groups and
// sequence slices travel in optional fields of pp's own
// (docs/Dialects/PP.md, docs/Seq1F1B.md).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"
#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleExport.h"

#include "llvm/Support/JSON.h"

#include <charconv>
#include <cmath>

using namespace mlir;
using namespace mlir::pp;

using Kind = sched::TimedAction::Kind;

/// Writes one action as {"op": ..., "stage": ..., "mb": ..., "peer": ...},
/// with the fields the spec gives its op, in the spec's order, and
/// `"grouped": true` on a transfer posted with the one before it.
static void writeAction(const sched::ProgramAction &action, raw_ostream &os) {
  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("op", getActionSpelling(*getActionKind(action)).json);
    json.attribute("stage", action.stage);
    if (action.kind != Kind::compute && !action.isTransfer())
      return;
    json.attribute("mb", action.mb);
    if (!action.isTransfer())
      return;
    json.attribute("peer", action.peer);
    // pp's extension of the contract, written only where it holds, so that a
    // schedule without exchange groups is plain pp-schedule-v1.
    if (action.grouped)
      json.attribute("grouped", true);
  });
}

/// Reports the first action of `program` that pp-schedule-v1 cannot
/// express: an overlapped pair, or an op that is no schedule action.
static LogicalResult checkActions(ScheduleOp schedule,
                                  const sched::Program &program) {
  for (auto [rank, actions] : llvm::enumerate(program.ranks))
    for (auto [index, action] : llvm::enumerate(actions)) {
      sched::Violation violation;
      violation.site = {static_cast<int64_t>(rank),
                        static_cast<int64_t>(index)};
      // The contract times every action on its own; an overlapped pair
      // would silently lose its concurrency.
      if (action.overlapped)
        violation.message = "runs overlapped with the forward before it, "
                            "which pp-schedule-v1 cannot express; export it "
                            "as a PyTorch CSV instead";
      else if (action.kind == Kind::other)
        violation.message = "is not a schedule action, which pp-schedule-v1 "
                            "cannot express";
      else
        continue;
      return emitViolation(schedule, violation);
    }
  return success();
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

/// Writes the `cost` object: each phase's times under its action's name.
static void writeCost(llvm::json::OStream &json,
                      const sched::StageCosts &cost) {
  auto name = [](Phase phase) {
    return getActionSpelling(getComputeAction(phase)).json;
  };
  json.attributeObject("cost", [&] {
    writeCompactArray(json, name(Phase::forward), ArrayRef(cost.forward));
    writeCompactArray(json, name(Phase::backward_input),
                      ArrayRef(cost.backwardInput));
    writeCompactArray(json, name(Phase::backward_weight),
                      ArrayRef(cost.backwardWeight));
    json.attributeBegin("comm");
    writeNumber(json, cost.transfer);
    json.attributeEnd();
    writeCompactArray(json, "activation", ArrayRef(cost.activation));
    writeCompactArray(json, "weight_grad_stash", ArrayRef(cost.stash));
  });
}

/// Writes `zero` and `zero_gather` as the program holds them: one value
/// for every stage, or an array with one per stage; `zero_gather` only where
/// a stage gathers per param.
static void writeZero(llvm::json::OStream &json,
                      const sched::Program &program) {
  if (program.zeroStages.size() == 1)
    json.attribute("zero", program.zeroStages.front());
  else if (!program.zeroStages.empty())
    writeCompactArray(json, "zero", ArrayRef(program.zeroStages));
  ArrayRef<bool> perParam = program.gatherPerParam;
  if (!llvm::is_contained(perParam, true))
    return;
  auto unit = [](bool param) { return param ? "param" : "stage"; };
  if (perParam.size() == 1) {
    json.attribute("zero_gather", unit(true));
    return;
  }
  json.attributeArray("zero_gather", [&] {
    for (bool param : perParam)
      json.value(unit(param));
  });
}

LogicalResult mlir::pp::exportScheduleToJSON(ScheduleOp schedule,
                                             raw_ostream &os) {
  sched::Program program =
      readProgram(schedule, schedule.getSemanticsOr(TransferSemantics::async));
  if (failed(checkActions(schedule, program)))
    return failure();
  // Imported again, the costs would lose their micro-batch tables.
  if (program.cost && program.cost->getNumMicrobatches() != 0)
    return schedule.emitOpError("has per-micro-batch costs, which "
                                "pp-schedule-v1 cannot express");
  // Imported again, the schedule would train synchronously.
  if (schedule.getNumWeightVersions() != 1)
    return schedule.emitOpError("keeps ")
           << schedule.getNumWeightVersions()
           << " weight versions (pipedream-2bw), which pp-schedule-v1 "
              "cannot express";
  ScheduleSpelling spelling = readScheduleSpelling(schedule);
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("format", "pp-schedule-v1");
    json.attribute("name", spelling.name);
    json.attribute("num_ranks", program.getNumRanks());
    json.attribute("num_stages", program.numStages);
    json.attribute("num_microbatches", program.numMicrobatches);
    writeCompactArray(json, "stage_rank", ArrayRef(program.stageRank));
    if (program.cost)
      writeCost(json, *program.cost);
    // One number for every rank, or one per rank, as the schedule has it.
    if (!program.memoryCap.empty()) {
      if (spelling.uniformMemoryCap) {
        json.attributeBegin("memory_cap");
        writeNumber(json, program.memoryCap.front());
        json.attributeEnd();
      } else {
        writeCompactArray(json, "memory_cap", ArrayRef(program.memoryCap));
      }
    }
    if (spelling.hasReplicas)
      json.attribute("num_replicas", program.numReplicas);
    // pp's extension: the actions' `mb` index sequence slices.
    if (spelling.hasSlices)
      json.attribute("slices", program.numSlices);
    writeZero(json, program);
    json.attributeArray("ranks", [&] {
      for (ArrayRef<sched::ProgramAction> actions : program.ranks) {
        json.array([&] {
          for (const sched::ProgramAction &action : actions)
            json.rawValue([&](raw_ostream &os) { writeAction(action, os); });
        });
      }
    });
  });
  os << "\n";
  return success();
}
