//===- PyTorchCSVToSchedule.cpp - PyTorch pipelining CSV to pp.schedule ---===//
//
// Reads the schedule CSV of torch.distributed.pipelining (`_dump_csv` /
// `_load_csv`): row r lists the actions of rank r, each written
// `{stage}{op}{micro-batch}` with op F (forward), I (input-gradient
// backward), W (weight-gradient backward), B (full backward), SEND_F,
// RECV_F, SEND_B, RECV_B, WAIT_SEND_F or WAIT_SEND_B, or `{stage}{op}` with
// op REDUCE_GRAD, WAIT_REDUCE_GRAD, UNSHARD or RESHARD; `(F;B)OVERLAP_F_B`
// pairs a forward with a backward that runs concurrently with it. Empty
// cells are idle steps. The CSV does not say where stages live, so each
// stage is placed on the rank that runs its forwards, and transfer peers
// follow from that placement.
//
// REDUCE_GRAD becomes the stage's `pp.all_reduce`; its WAIT_REDUCE_GRAD has
// no action of its own (the optimizer step waits for the sum). pp's sends
// never block, so WAIT_SEND_F/B are dropped. UNSHARD and RESHARD gather and
// free FSDP-sharded parameters, which pp does not model; PyTorch's runtime
// schedules emit them around every stage whether it is sharded or not, so
// they are dropped too. Each wait must follow what it waits for.
//
// PyTorch's RECV_F/RECV_B posts a receive that the compute needing it waits
// for; a `pp.recv` is that wait, so each receive moves to right before its
// consumer (before the overlapped pair that holds it).
//
// The actions become a sched::Program, which the schedule adapter writes as
// IR.
//
//===----------------------------------------------------------------------===//

#include "ImportSupport.h"

#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleImport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::importer;
using namespace mlir::pp::sched;

using Kind = TimedAction::Kind;

namespace {
/// Identifies an action within a row: (kind, stage, micro-batch).
using RowKey = std::tuple<int, int64_t, int64_t>;

/// One action of the CSV: a cell, or half of an overlapped pair.
struct CSVAction {
  ActionKind op;
  int64_t stage;
  int64_t mb;
  /// Whether it runs concurrently with the action before it (the backward
  /// of an OVERLAP_F_B).
  bool overlap;
  /// The action's text and where it starts in the file.
  StringRef text;
  size_t offset;
};

/// The actions of one rank and where its line starts.
struct CSVRow {
  size_t offset;
  SmallVector<CSVAction> actions;
};
} // namespace

/// The op list of the malformed-action error, from the vocabulary: those
/// with a micro-batch (`withMicrobatch`) or those without.
static std::string listPyTorchOps(bool withMicrobatch) {
  SmallVector<StringRef> names;
  for (const ActionSpelling &spelling : getActionVocabulary())
    if (!spelling.pytorch.empty() && spelling.hasMicrobatch == withMicrobatch &&
        !llvm::is_contained(names, spelling.pytorch))
      names.push_back(spelling.pytorch);
  return llvm::join(ArrayRef(names).drop_back(), ", ") + " or " +
         names.back().str();
}

/// Parses one action such as `0F1`, `1SEND_B0` or `2REDUCE_GRAD`.
static FailureOr<CSVAction> parseAction(StringRef text, size_t offset,
                                        const SourceLocator &locator) {
  auto emitActionError = [&] {
    return mlir::emitError(locator.getLoc(offset));
  };
  auto malformed = [&] {
    return emitActionError()
           << "malformed PyTorch action '" << text
           << "': expected {stage}{op}{micro-batch} with op "
           << listPyTorchOps(/*withMicrobatch=*/true)
           << ", {stage}{op} with op " << listPyTorchOps(false) << ", or (F;B)"
           << kPyTorchOverlap << ", e.g. '0F1', '1SEND_B0' or '(0F3;3B1)"
           << kPyTorchOverlap << "'";
  };
  size_t stageEnd = text.find_first_not_of("0123456789");
  if (stageEnd == 0 || stageEnd == StringRef::npos)
    return malformed();
  StringRef rest = text.drop_front(stageEnd);
  size_t opEnd = std::min(rest.find_first_of("0123456789"), rest.size());
  StringRef opName = rest.take_front(opEnd), mbText = rest.drop_front(opEnd);
  std::optional<ActionKind> op = lookupPyTorchAction(opName);
  CSVAction action{ActionKind::Forward, 0, 0, /*overlap=*/false, text, offset};
  bool hasMicrobatch = op && getActionSpelling(*op).hasMicrobatch;
  if (!op || text.take_front(stageEnd).getAsInteger(10, action.stage) ||
      mbText.empty() == hasMicrobatch ||
      (hasMicrobatch && mbText.getAsInteger(10, action.mb)))
    return malformed();
  if (action.stage >= kMaxStages)
    return emitActionError()
           << "PyTorch action '" << text << "' has stage " << action.stage
           << "; at most " << kMaxStages << " stages are supported";
  if (action.mb >= kMaxMicrobatches)
    return emitActionError()
           << "PyTorch action '" << text << "' has micro-batch " << action.mb
           << "; at most " << kMaxMicrobatches
           << " micro-batches are supported";
  action.op = *op;
  return action;
}

/// Parses `(F;B)OVERLAP_F_B`, a forward and the backward that runs
/// concurrently with it, into its two actions.
static LogicalResult parseOverlap(StringRef cell, size_t offset,
                                  const SourceLocator &locator,
                                  SmallVectorImpl<CSVAction> &actions) {
  size_t close = cell.find(')');
  SmallVector<StringRef, 2> parts;
  if (close != StringRef::npos)
    cell.slice(1, close).split(parts, ';');
  if (close == StringRef::npos ||
      cell.drop_front(close + 1) != kPyTorchOverlap || parts.size() != 2)
    return mlir::emitError(locator.getLoc(offset))
           << "malformed PyTorch action '" << cell
           << "': expected an overlapped forward and backward "
              "(F;B)OVERLAP_F_B, e.g. '(0F3;3B1)OVERLAP_F_B'";
  for (StringRef part : parts) {
    StringRef text = part.trim(" \t");
    size_t textOffset = offset + (text.data() - cell.data());
    FailureOr<CSVAction> action = parseAction(text, textOffset, locator);
    if (failed(action))
      return failure();
    actions.push_back(*action);
  }
  CSVAction &forward = actions[actions.size() - 2], &backward = actions.back();
  if (forward.op != ActionKind::Forward ||
      !llvm::is_contained({ActionKind::BackwardInput,
                           ActionKind::BackwardWeight, ActionKind::Backward},
                          backward.op))
    return mlir::emitError(locator.getLoc(offset))
           << "'" << cell
           << "' must overlap a forward (F) with a backward (I, W or B), in "
              "that order";
  if (forward.stage == backward.stage && forward.mb == backward.mb)
    return mlir::emitError(locator.getLoc(offset))
           << "'" << cell << "' overlaps a backward with the forward whose "
           << "result it needs";
  backward.overlap = true;
  return success();
}

/// Parses one trimmed, non-empty cell into its actions.
static LogicalResult parseCell(StringRef cell, size_t offset,
                               const SourceLocator &locator,
                               SmallVectorImpl<CSVAction> &actions) {
  if (cell.starts_with("("))
    return parseOverlap(cell, offset, locator, actions);
  FailureOr<CSVAction> action = parseAction(cell, offset, locator);
  if (failed(action))
    return failure();
  actions.push_back(*action);
  return success();
}

/// Checks that every wait of `row` follows the send or reduction it waits
/// for.
static LogicalResult checkWaits(const CSVRow &row,
                                const SourceLocator &locator) {
  llvm::DenseSet<RowKey> started;
  auto key = [](ActionKind op, const CSVAction &action) {
    return std::make_tuple(static_cast<int>(op), action.stage, action.mb);
  };
  for (const CSVAction &action : row.actions) {
    std::optional<ActionKind> awaited;
    switch (action.op) {
    case ActionKind::WaitSendActivation:
      awaited = ActionKind::SendActivation;
      break;
    case ActionKind::WaitSendGradient:
      awaited = ActionKind::SendGradient;
      break;
    case ActionKind::WaitAllReduce:
      awaited = ActionKind::AllReduce;
      break;
    default:
      started.insert(key(action.op, action));
      continue;
    }
    if (!started.contains(key(*awaited, action)))
      return mlir::emitError(locator.getLoc(action.offset))
             << "'" << action.text << "' waits for a "
             << (*awaited == ActionKind::AllReduce
                     ? StringRef(getActionSpelling(*awaited).pytorch)
                     : StringRef("send"))
             << " that does not come before it on its rank";
  }
  return success();
}

/// Moves each receive of `row` to right before the compute that consumes it
/// (or that compute's overlapped pair), where PyTorch waits for it. A
/// receive without a later consumer stays (the verifier reports it).
static void moveReceivesToConsumers(CSVRow &row) {
  auto computeKey = [](const CSVAction &action) -> std::optional<RowKey> {
    if (action.op == ActionKind::Forward)
      return RowKey{0, action.stage, action.mb};
    if (action.op == ActionKind::Backward ||
        action.op == ActionKind::BackwardInput)
      return RowKey{1, action.stage, action.mb};
    return std::nullopt;
  };
  // Where each compute's wait goes: before it, or before its pair.
  llvm::DenseMap<RowKey, size_t> waitAt;
  for (auto [i, action] : llvm::enumerate(row.actions))
    if (std::optional<RowKey> key = computeKey(action))
      waitAt.try_emplace(*key, action.overlap ? i - 1 : i);
  llvm::DenseMap<size_t, SmallVector<CSVAction, 2>> deferred;
  SmallVector<CSVAction> order;
  for (auto [i, action] : llvm::enumerate(row.actions)) {
    if (auto it = deferred.find(i); it != deferred.end())
      llvm::append_range(order, it->second);
    if (action.op == ActionKind::RecvActivation ||
        action.op == ActionKind::RecvGradient) {
      auto it =
          waitAt.find(RowKey{action.op == ActionKind::RecvActivation ? 0 : 1,
                             action.stage, action.mb});
      if (it != waitAt.end() && it->second > i) {
        deferred[it->second].push_back(action);
        continue;
      }
    }
    order.push_back(action);
  }
  row.actions = std::move(order);
}

/// Splits the CSV into rows of actions, as Python's csv.reader does: one
/// row per line (a final line break ends the last row rather than starting
/// an empty one), cells separated by commas and trimmed of blanks and
/// quotes, empty cells skipped.
static FailureOr<SmallVector<CSVRow>> parseRows(const SourceLocator &locator) {
  StringRef text = locator.getText();
  SmallVector<CSVRow> rows;
  for (size_t lineStart = 0; lineStart < text.size();) {
    size_t lineEnd = std::min(text.find('\n', lineStart), text.size());
    StringRef line = text.slice(lineStart, lineEnd).rtrim('\r');
    if (static_cast<int64_t>(rows.size()) == kMaxRanks)
      return mlir::emitError(locator.getLoc(lineStart))
             << "the CSV has more than " << kMaxRanks << " rows; at most "
             << kMaxRanks << " ranks are supported";
    CSVRow &row = rows.emplace_back();
    row.offset = lineStart;
    for (size_t cellStart = 0; cellStart <= line.size();) {
      size_t cellEnd = std::min(line.find(',', cellStart), line.size());
      StringRef raw = line.slice(cellStart, cellEnd);
      StringRef cell = raw.ltrim(" \t");
      size_t offset = lineStart + cellStart + (raw.size() - cell.size());
      cell = cell.rtrim(" \t");
      if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
        cell = cell.drop_front().drop_back();
        ++offset;
      }
      if (!cell.empty() &&
          failed(parseCell(cell, offset, locator, row.actions)))
        return failure();
      cellStart = cellEnd + 1;
    }
    if (failed(checkWaits(row, locator)))
      return failure();
    moveReceivesToConsumers(row);
    lineStart = lineEnd + 1;
  }
  return rows;
}

/// Places each stage on the rank whose row holds its forwards.
static FailureOr<SmallVector<int64_t>>
inferPlacement(ArrayRef<CSVRow> rows, int64_t numStages,
               const SourceLocator &locator) {
  // Maps, not vectors: a typo such as `1000000F0` must not allocate a
  // million stages before it is reported.
  llvm::DenseMap<int64_t, std::pair<int64_t, const CSVAction *>> forwards;
  llvm::DenseMap<int64_t, const CSVAction *> firstUse;
  for (auto [rank, row] : llvm::enumerate(rows)) {
    for (const CSVAction &action : row.actions) {
      firstUse.try_emplace(action.stage, &action);
      if (action.op != ActionKind::Forward)
        continue;
      auto [it, inserted] = forwards.try_emplace(action.stage, rank, &action);
      auto [owner, first] = it->second;
      if (inserted || owner == static_cast<int64_t>(rank))
        continue;
      InFlightDiagnostic diag =
          mlir::emitError(locator.getLoc(action.offset))
          << "stage " << action.stage << " runs forwards on rank " << rank
          << " and on rank " << owner << "; a stage must live on one rank";
      diag.attachNote(locator.getLoc(first->offset))
          << "rank " << owner << " runs '" << first->text << "' here";
      return diag;
    }
  }
  if (static_cast<int64_t>(forwards.size()) != numStages) {
    int64_t stage = 0;
    while (forwards.contains(stage))
      ++stage;
    const CSVAction *use = firstUse.lookup(stage);
    if (!use) {
      const CSVAction *last = firstUse.lookup(numStages - 1);
      return mlir::emitError(locator.getLoc(last->offset))
             << "'" << last->text << "' implies " << numStages
             << " stages, but no action uses stage " << stage;
    }
    return mlir::emitError(locator.getLoc(use->offset))
           << "stage " << stage
           << " has no forward (F) action in any row, so the rank that owns "
              "it is unknown";
  }
  SmallVector<int64_t> stageRank(numStages);
  for (auto [stage, forward] : forwards)
    stageRank[stage] = forward.first;
  return stageRank;
}

/// Whether an UNSHARD of `row` follows its stage's REDUCE_GRAD: ZeRO-1's
/// all-gather of updated weights (pp's export), not FSDP's gather before
/// use, which PyTorch's lowering puts before every stage's computes.
static bool isGatherAfterReduction(const CSVRow &row, size_t index) {
  const CSVAction &gather = row.actions[index];
  return llvm::any_of(ArrayRef(row.actions).take_front(index),
                      [&](const CSVAction &action) {
                        return action.op == ActionKind::AllReduce &&
                               action.stage == gather.stage;
                      });
}

/// The pp action of `row`'s action `index`, if it has one; transfers get
/// their peer from the placement. Under ZeRO-1 (`zero`) REDUCE_GRAD is a
/// reduce-scatter.
static FailureOr<std::optional<ProgramAction>>
getProgramAction(const CSVRow &row, size_t index, ArrayRef<int64_t> stageRank,
                 bool zero, const SourceLocator &locator) {
  const CSVAction &action = row.actions[index];
  Location loc = locator.getLoc(action.offset);
  int64_t last = stageRank.size() - 1;
  ProgramAction result;
  result.stage = action.stage;
  result.mb = action.mb;
  if (std::optional<Phase> phase = getComputePhase(action.op)) {
    result.phase = *phase;
    result.overlapped = action.overlap;
    return {result};
  }
  if (action.op == ActionKind::AllReduce) {
    result.kind = zero ? Kind::reduceScatter : Kind::allReduce;
    return {result};
  }
  if (action.op == ActionKind::AllGather && zero) {
    if (!isGatherAfterReduction(row, index))
      return mlir::emitError(loc)
             << "'" << action.text << "' gathers weights before their "
             << "stage's REDUCE_GRAD in a ZeRO-1 schedule, whose UNSHARD "
             << "spreads the updated weights after it";
    result.kind = Kind::allGather;
    return {result};
  }
  // FSDP's gather before use and free after (ZeRO-3), which PyTorch's
  // lowering adds to every schedule and runs as no-ops on stages that are
  // not sharded: the import keeps the weights whole, and says so.
  if (action.op == ActionKind::AllGather || action.op == ActionKind::Reshard) {
    if (zero)
      return mlir::emitError(loc)
             << "'" << action.text << "' frees gathered weights (ZeRO-3) "
             << "in a ZeRO-1 schedule; the CSV import does not shard "
             << "weights";
    mlir::emitWarning(loc)
        << "'" << action.text << "' "
        << (action.op == ActionKind::Reshard ? "frees" : "gathers")
        << " FSDP-sharded weights (ZeRO-3), which the CSV import does not "
           "shard: the stage keeps whole weights";
    return {std::nullopt};
  }
  // Waits have no pp action.
  std::optional<TransferAction> transfer = getTransfer(action.op);
  if (!transfer)
    return {std::nullopt};
  bool isSend = transfer->isSend;
  bool isActivation = transfer->kind == TransferKind::activation;
  // Activations flow from stage s to s + 1, gradients back.
  int64_t neighbour =
      isSend == isActivation ? action.stage + 1 : action.stage - 1;
  if (neighbour < 0 || neighbour > last)
    return mlir::emitError(loc)
           << "'" << action.text << "' "
           << (isSend ? "sends to" : "receives from") << " stage " << neighbour
           << ", but the stages are 0.." << last;
  result.kind = isSend ? Kind::send : Kind::recv;
  result.transfer = transfer->kind;
  result.peer = stageRank[neighbour];
  return {result};
}

OwningOpRef<ModuleOp>
mlir::pp::importScheduleFromPyTorchCSV(llvm::SourceMgr &sourceMgr,
                                       MLIRContext *context) {
  context->loadDialect<PPDialect>();
  SourceLocator locator(sourceMgr, context);
  FailureOr<SmallVector<CSVRow>> rows = parseRows(locator);
  if (failed(rows))
    return nullptr;

  int64_t numStages = 0, numMicrobatches = 0;
  for (const CSVRow &row : *rows)
    for (const CSVAction &action : row.actions) {
      numStages = std::max(numStages, action.stage + 1);
      numMicrobatches = std::max(numMicrobatches, action.mb + 1);
    }
  if (numStages == 0) {
    mlir::emitError(locator.getLoc(0))
        << "the CSV holds no actions; expected one row of actions per rank";
    return nullptr;
  }
  FailureOr<SmallVector<int64_t>> stageRank =
      inferPlacement(*rows, numStages, locator);
  if (failed(stageRank))
    return nullptr;

  // An UNSHARD after its stage's REDUCE_GRAD makes the schedule ZeRO-1's:
  // its REDUCE_GRADs are reduce-scatters.
  bool zero = llvm::any_of(*rows, [](const CSVRow &row) {
    return llvm::any_of(llvm::seq<size_t>(0, row.actions.size()),
                        [&](size_t i) {
                          return row.actions[i].op == ActionKind::AllGather &&
                                 isGatherAfterReduction(row, i);
                        });
  });
  Program program;
  program.numStages = numStages;
  program.numMicrobatches = numMicrobatches;
  program.stageRank = *stageRank;
  if (zero)
    program.zeroStages = {1};
  ScheduleSpelling spelling;
  spelling.name = locator.getFileStem().str();
  // Where each action of the program is in the text.
  SmallVector<SmallVector<size_t>> offsets;
  for (const CSVRow &row : *rows) {
    auto &actions = program.ranks.emplace_back();
    auto &actionOffsets = offsets.emplace_back();
    for (size_t i = 0, e = row.actions.size(); i < e; ++i) {
      FailureOr<std::optional<ProgramAction>> action =
          getProgramAction(row, i, *stageRank, zero, locator);
      if (failed(action))
        return nullptr;
      if (!*action)
        continue;
      actions.push_back(**action);
      actionOffsets.push_back(row.actions[i].offset);
    }
  }
  return writeImportedProgram(
      context, program, spelling, [&](ProgramSite site) -> Location {
        if (site.rank < 0)
          return locator.getLoc(0);
        if (site.action < 0)
          return locator.getLoc((*rows)[site.rank].offset);
        return locator.getLoc(offsets[site.rank][site.action]);
      });
}
