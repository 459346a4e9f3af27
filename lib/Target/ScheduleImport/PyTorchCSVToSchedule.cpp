//===- PyTorchCSVToSchedule.cpp - PyTorch pipelining CSV to pp.schedule ---===//
//
// Reads the schedule CSV of torch.distributed.pipelining (`_dump_csv` /
// `_load_csv`): row r lists the actions of rank r, each written
// `{stage}{op}{micro-batch}` with op F (forward), I (input-gradient
// backward), W (weight-gradient backward), B (full backward), SEND_F,
// RECV_F, SEND_B or RECV_B; empty cells are idle steps. The CSV does not say
// where stages live, so each stage is placed on the rank that runs its
// forwards, and transfer peers follow from that placement.
//
//===----------------------------------------------------------------------===//

#include "ImportSupport.h"

#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleImport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <optional>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::importer;

namespace {
/// The PyTorch computation types pp has an action for.
enum class CSVOp { F, I, W, B, SendF, RecvF, SendB, RecvB };

/// One non-empty cell of the CSV.
struct CSVAction {
  CSVOp op;
  int64_t stage;
  int64_t mb;
  /// The cell's text and where it starts in the file.
  StringRef text;
  size_t offset;
};

/// The actions of one rank and where its line starts.
struct CSVRow {
  size_t offset;
  SmallVector<CSVAction> actions;
};
} // namespace

/// Parses one trimmed, non-empty cell such as `0F1` or `1SEND_B0`.
static FailureOr<CSVAction> parseCell(StringRef cell, size_t offset,
                                      const SourceLocator &locator) {
  auto emitCellError = [&] { return mlir::emitError(locator.getLoc(offset)); };
  // PyTorch's FSDP and overlap actions have no pp counterpart.
  for (StringRef unsupported :
       {"UNSHARD", "RESHARD", "REDUCE_GRAD", "OVERLAP_F_B"})
    if (cell.contains(unsupported))
      return emitCellError()
             << "unsupported PyTorch action '" << cell << "': pp schedules "
             << "have no " << unsupported << " step (only F, I, W, B, "
             << "SEND_F, RECV_F, SEND_B and RECV_B)";

  auto malformed =
      [&] {
        return emitCellError()
               << "malformed PyTorch action '" << cell
               << "': expected {stage}{op}{micro-batch} with op F, I, W, B, "
                  "SEND_F, RECV_F, SEND_B or RECV_B, e.g. '0F1' or '1SEND_B0'";
      };
  size_t stageEnd = cell.find_first_not_of("0123456789");
  if (stageEnd == 0 || stageEnd == StringRef::npos)
    return malformed();
  StringRef rest = cell.drop_front(stageEnd);
  size_t opEnd = std::min(rest.find_first_of("0123456789"), rest.size());
  StringRef opName = rest.take_front(opEnd), mbText = rest.drop_front(opEnd);
  std::optional<CSVOp> op = llvm::StringSwitch<std::optional<CSVOp>>(opName)
                                .Case("F", CSVOp::F)
                                .Case("I", CSVOp::I)
                                .Case("W", CSVOp::W)
                                .Case("B", CSVOp::B)
                                .Case("SEND_F", CSVOp::SendF)
                                .Case("RECV_F", CSVOp::RecvF)
                                .Case("SEND_B", CSVOp::SendB)
                                .Case("RECV_B", CSVOp::RecvB)
                                .Default(std::nullopt);
  CSVAction action{CSVOp::F, 0, 0, cell, offset};
  if (!op || cell.take_front(stageEnd).getAsInteger(10, action.stage) ||
      mbText.empty() || mbText.getAsInteger(10, action.mb))
    return malformed();
  if (action.stage >= kMaxStages)
    return emitCellError() << "PyTorch action '" << cell << "' has stage "
                           << action.stage << "; at most " << kMaxStages
                           << " stages are supported";
  if (action.mb >= kMaxMicrobatches)
    return emitCellError() << "PyTorch action '" << cell << "' has micro-batch "
                           << action.mb << "; at most " << kMaxMicrobatches
                           << " micro-batches are supported";
  action.op = *op;
  return action;
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
      if (!cell.empty()) {
        FailureOr<CSVAction> action = parseCell(cell, offset, locator);
        if (failed(action))
          return failure();
        row.actions.push_back(*action);
      }
      cellStart = cellEnd + 1;
    }
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
      if (action.op != CSVOp::F)
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

/// Creates the pp action of one cell; transfers get their peer from the
/// placement.
static LogicalResult createAction(const CSVAction &action,
                                  ArrayRef<int64_t> stageRank,
                                  const SourceLocator &locator,
                                  OpBuilder &builder) {
  Location loc = locator.getLoc(action.offset);
  int64_t last = stageRank.size() - 1;
  switch (action.op) {
  case CSVOp::F:
    ComputeOp::create(builder, loc, Phase::forward, action.stage, action.mb);
    return success();
  case CSVOp::I:
    ComputeOp::create(builder, loc, Phase::backward_input, action.stage,
                      action.mb);
    return success();
  case CSVOp::W:
    ComputeOp::create(builder, loc, Phase::backward_weight, action.stage,
                      action.mb);
    return success();
  case CSVOp::B:
    ComputeOp::create(builder, loc, Phase::backward, action.stage, action.mb);
    return success();
  default:
    break;
  }
  bool isSend = action.op == CSVOp::SendF || action.op == CSVOp::SendB;
  bool isActivation = action.op == CSVOp::SendF || action.op == CSVOp::RecvF;
  // Activations flow from stage s to s + 1, gradients back.
  int64_t neighbour =
      isSend == isActivation ? action.stage + 1 : action.stage - 1;
  if (neighbour < 0 || neighbour > last)
    return mlir::emitError(loc)
           << "'" << action.text << "' "
           << (isSend ? "sends to" : "receives from") << " stage " << neighbour
           << ", but the stages are 0.." << last;
  TransferKind kind =
      isActivation ? TransferKind::activation : TransferKind::gradient;
  if (isSend)
    SendOp::create(builder, loc, kind, action.stage, action.mb,
                   stageRank[neighbour]);
  else
    RecvOp::create(builder, loc, kind, action.stage, action.mb,
                   stageRank[neighbour]);
  return success();
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

  OpBuilder builder(context);
  OwningOpRef<ModuleOp> module = createImportedSchedule(
      builder, locator.getLoc(0), locator.getFileStem(), numMicrobatches,
      *stageRank, /*cost=*/nullptr, /*memoryCap=*/nullptr);
  for (auto [rank, row] : llvm::enumerate(*rows)) {
    auto rankOp = RankOp::create(builder, locator.getLoc(row.offset), rank);
    OpBuilder::InsertionGuard guard(builder);
    builder.createBlock(&rankOp.getBody());
    for (const CSVAction &action : row.actions)
      if (failed(createAction(action, *stageRank, locator, builder)))
        return nullptr;
  }
  return module;
}
