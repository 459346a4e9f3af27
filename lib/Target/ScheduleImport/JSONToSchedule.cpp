//===- JSONToSchedule.cpp - pp-schedule-v1 JSON to pp.schedule ------------===//
//
// Reads the JSON contract of docs/ScheduleJSON.md into a
// sched::Program, with pp's optional `grouped` on transfers
// (docs/Dialects/PP.md), which the schedule adapter writes as IR.
// llvm::json parses the document but forgets where its values were, so a
// small scan of the (then known valid) text records where each value begins,
// and every error points at the value or object that caused it.
//
//===----------------------------------------------------------------------===//

#include "ImportSupport.h"

#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"
#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Utils/JSONDepth.h"
#include "pp/Target/ScheduleImport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::importer;

namespace {

//===----------------------------------------------------------------------===//
// JSONPositions
//===----------------------------------------------------------------------===//

/// Where each value of a valid JSON text begins: a tree of the same shape as
/// the llvm::json::Value parsed from that text.
class JSONPositions {
public:
  using NodeId = unsigned;
  static constexpr NodeId root = 0;

  /// Scans `text`, which llvm::json::parse has accepted.
  explicit JSONPositions(StringRef text) : text(text) { scanValue(); }

  size_t getOffset(NodeId node) const { return nodes[node].offset; }

  /// A key written twice in one object: llvm::json keeps the last value.
  struct DuplicateKey {
    StringRef key;
    size_t first, second;
  };
  /// The first duplicate key of the text, if any.
  const std::optional<DuplicateKey> &getDuplicateKey() const {
    return duplicate;
  }

  /// The value of `key` in the object at `node`, or the object itself if
  /// the scan did not record the key: keys are compared as written, without
  /// decoding escapes, which no key of the format needs.
  NodeId getMember(NodeId node, StringRef key) const {
    for (auto [name, child] : nodes[node].members)
      if (name == key)
        return child;
    return node;
  }

  /// Element `index` of the array at `node`, or the array itself.
  NodeId getElement(NodeId node, size_t index) const {
    if (index >= nodes[node].elements.size())
      return node;
    return nodes[node].elements[index];
  }

private:
  struct Node {
    size_t offset;
    SmallVector<std::pair<StringRef, NodeId>, 0> members;
    SmallVector<NodeId, 0> elements;
  };

  bool atEnd() const { return pos >= text.size(); }
  void skipWhitespace() {
    while (!atEnd() && StringRef(" \t\r\n").contains(text[pos]))
      ++pos;
  }
  /// Skips `c` if it comes next.
  bool consume(char c) {
    skipWhitespace();
    if (atEnd() || text[pos] != c)
      return false;
    ++pos;
    return true;
  }
  /// Skips a string starting at `pos` and returns its raw contents.
  StringRef scanString() {
    skipWhitespace();
    size_t begin = ++pos;
    while (!atEnd() && text[pos] != '"')
      pos += text[pos] == '\\' ? 2 : 1;
    StringRef contents = text.slice(begin, pos);
    ++pos;
    return contents;
  }

  NodeId scanValue() {
    skipWhitespace();
    NodeId node = nodes.size();
    nodes.push_back({pos, {}, {}});
    if (atEnd())
      return node;
    switch (text[pos]) {
    case '{':
      ++pos;
      if (consume('}'))
        return node;
      scanMembers(node);
      consume('}');
      return node;
    case '[':
      ++pos;
      if (consume(']'))
        return node;
      do {
        NodeId child = scanValue();
        nodes[node].elements.push_back(child);
      } while (consume(','));
      consume(']');
      return node;
    case '"':
      scanString();
      return node;
    default:
      // A number, true, false or null.
      do
        ++pos;
      while (!atEnd() && !StringRef(",]} \t\r\n").contains(text[pos]));
      return node;
    }
  }

  void scanMembers(NodeId node) {
    // Where each key of this object starts, to find duplicates.
    llvm::SmallDenseMap<StringRef, size_t, 8> keyOffsets;
    do {
      skipWhitespace();
      size_t keyOffset = pos;
      StringRef key = scanString();
      auto [it, inserted] = keyOffsets.try_emplace(key, keyOffset);
      if (!inserted && !duplicate)
        duplicate = DuplicateKey{key, it->second, keyOffset};
      consume(':');
      NodeId child = scanValue();
      nodes[node].members.emplace_back(key, child);
    } while (consume(','));
  }

  StringRef text;
  size_t pos = 0;
  std::vector<Node> nodes;
  std::optional<DuplicateKey> duplicate;
};

} // namespace

//===----------------------------------------------------------------------===//
// JSONScheduleImporter
//===----------------------------------------------------------------------===//

/// "a string", "an array", ... for diagnostics.
static StringRef describeKind(const llvm::json::Value &value) {
  switch (value.kind()) {
  case llvm::json::Value::Null:
    return "null";
  case llvm::json::Value::Boolean:
    return "a boolean";
  case llvm::json::Value::Number:
    return "a number";
  case llvm::json::Value::String:
    return "a string";
  case llvm::json::Value::Array:
    return "an array";
  case llvm::json::Value::Object:
    return "an object";
  }
  llvm_unreachable("unknown JSON kind");
}

namespace {
/// A JSON value and the node of JSONPositions that says where it is.
struct Located {
  const llvm::json::Value *value;
  JSONPositions::NodeId node;
};

class JSONScheduleImporter {
public:
  JSONScheduleImporter(llvm::SourceMgr &sourceMgr, MLIRContext *context)
      : context(context), locator(sourceMgr, context) {}

  OwningOpRef<ModuleOp> import();

private:
  Location getLoc(JSONPositions::NodeId node) const {
    return locator.getLoc(positions->getOffset(node));
  }
  InFlightDiagnostic emitError(JSONPositions::NodeId node) const {
    return mlir::emitError(getLoc(node));
  }

  // Each getter reads a field of an object, or an element of an array, and
  // emits an error prefixed with `where` ("action 3 of rank 0: ") at the
  // value, or at the object for a missing field, if it has the wrong kind.
  FailureOr<Located> getField(Located object, StringRef key, StringRef where);
  std::optional<Located> getOptionalField(Located object, StringRef key);
  FailureOr<int64_t> getInteger(Located value, const Twine &what,
                                StringRef where);
  /// An integer field in [0, bound): `what` names the bound ("stages").
  FailureOr<int64_t> getIndexField(Located object, StringRef key,
                                   StringRef where, int64_t bound,
                                   StringRef what);
  FailureOr<double> getNumber(Located value, const Twine &what,
                              StringRef where);
  FailureOr<Located> getArray(Located value, const Twine &what,
                              StringRef where);
  Located getElement(Located array, size_t index) const {
    return {&(*array.value->getAsArray())[index],
            positions->getElement(array.node, index)};
  }

  LogicalResult parseHeader(Located root);
  LogicalResult parseFormat(Located root);
  LogicalResult parseCounts(Located root);
  LogicalResult parseStageRank(Located root);
  LogicalResult parseExtensions(Located root);
  FailureOr<CostAttr> parseCost(Located cost);
  /// `memory_cap`: a number for every rank or an array of one per rank.
  LogicalResult parseMemoryCap(Located cap);
  /// The values of a per-stage field: one for every stage, or an array.
  FailureOr<SmallVector<Located>> getPerStage(Located field, StringRef key);
  /// `zero` and `zero_gather`: one value for every stage, or one per stage.
  LogicalResult parseZero(Located field);
  LogicalResult parseZeroGather(Located field);
  LogicalResult parseRank(Located actions, int64_t rank);
  FailureOr<sched::ProgramAction> parseAction(Located action, StringRef where);
  /// A transfer's optional `grouped`: posted with the transfer before it.
  FailureOr<bool> getGrouped(Located action, StringRef where);

  MLIRContext *context;
  SourceLocator locator;
  std::optional<JSONPositions> positions;

  // What is parsed: the program, how its header is spelled, and where each
  // rank and action is in the text.
  int64_t numRanks = 0;
  sched::Program program;
  ScheduleSpelling spelling;
  SmallVector<Location> rankLocs;
  SmallVector<SmallVector<Location>> actionLocs;
};
} // namespace

FailureOr<Located> JSONScheduleImporter::getField(Located object, StringRef key,
                                                  StringRef where) {
  if (std::optional<Located> field = getOptionalField(object, key))
    return *field;
  return emitError(object.node) << where << "missing field '" << key << "'";
}

std::optional<Located> JSONScheduleImporter::getOptionalField(Located object,
                                                              StringRef key) {
  const llvm::json::Value *value = object.value->getAsObject()->get(key);
  if (!value)
    return std::nullopt;
  return Located{value, positions->getMember(object.node, key)};
}

FailureOr<int64_t> JSONScheduleImporter::getInteger(Located value,
                                                    const Twine &what,
                                                    StringRef where) {
  if (std::optional<int64_t> integer = value.value->getAsInteger())
    return *integer;
  return emitError(value.node) << where << what << " must be an integer, got "
                               << describeKind(*value.value);
}

FailureOr<int64_t> JSONScheduleImporter::getIndexField(Located object,
                                                       StringRef key,
                                                       StringRef where,
                                                       int64_t bound,
                                                       StringRef what) {
  FailureOr<Located> field = getField(object, key, where);
  if (failed(field))
    return failure();
  FailureOr<int64_t> index = getInteger(*field, "'" + key + "'", where);
  if (failed(index))
    return failure();
  if (*index < 0 || *index >= bound)
    return emitError(field->node)
           << where << key << " " << *index
           << " out of range: the schedule has " << bound << " " << what;
  return *index;
}

FailureOr<double> JSONScheduleImporter::getNumber(Located value,
                                                  const Twine &what,
                                                  StringRef where) {
  std::optional<double> number = value.value->getAsNumber();
  if (!number)
    return emitError(value.node) << where << what << " must be a number, got "
                                 << describeKind(*value.value);
  // llvm::json reads a literal beyond the range of double, such as 1e400,
  // as infinity, which no JSON writer can write back.
  if (!std::isfinite(*number))
    return emitError(value.node)
           << where << what << " is out of the range of a double";
  return *number;
}

FailureOr<Located> JSONScheduleImporter::getArray(Located value,
                                                  const Twine &what,
                                                  StringRef where) {
  if (value.value->getAsArray())
    return value;
  return emitError(value.node) << where << what << " must be an array, got "
                               << describeKind(*value.value);
}

LogicalResult JSONScheduleImporter::parseHeader(Located root) {
  if (failed(parseFormat(root)) || failed(parseCounts(root)) ||
      failed(parseStageRank(root)))
    return failure();
  if (std::optional<Located> costField = getOptionalField(root, "cost")) {
    FailureOr<CostAttr> parsed = parseCost(*costField);
    if (failed(parsed))
      return failure();
    program.cost = getStageCosts(*parsed);
  }

  if (std::optional<Located> capField = getOptionalField(root, "memory_cap")) {
    if (failed(parseMemoryCap(*capField)))
      return failure();
  }
  return parseExtensions(root);
}

/// `format` and the optional `name`.
LogicalResult JSONScheduleImporter::parseFormat(Located root) {
  FailureOr<Located> format = getField(root, "format", "");
  if (failed(format))
    return failure();
  std::optional<StringRef> formatName = format->value->getAsString();
  if (!formatName || *formatName != "pp-schedule-v1") {
    InFlightDiagnostic diag = emitError(format->node)
                              << "'format' must be \"pp-schedule-v1\", got ";
    if (formatName)
      diag << "\"" << *formatName << "\"";
    else
      diag << describeKind(*format->value);
    return diag;
  }

  if (std::optional<Located> nameField = getOptionalField(root, "name")) {
    std::optional<StringRef> value = nameField->value->getAsString();
    if (!value)
      return emitError(nameField->node) << "'name' must be a string, got "
                                        << describeKind(*nameField->value);
    spelling.name = value->str();
  }
  return success();
}

/// `num_ranks`, `num_stages` and `num_microbatches`.
LogicalResult JSONScheduleImporter::parseCounts(Located root) {
  std::tuple<StringRef, int64_t *, int64_t> counts[] = {
      {"num_ranks", &numRanks, kMaxRanks},
      {"num_stages", &program.numStages, kMaxStages},
      {"num_microbatches", &program.numMicrobatches, kMaxMicrobatches}};
  for (auto [key, field, limit] : counts) {
    FailureOr<Located> count = getField(root, key, "");
    if (failed(count))
      return failure();
    FailureOr<int64_t> value = getInteger(*count, "'" + key + "'", "");
    if (failed(value))
      return failure();
    if (*value <= 0)
      return emitError(count->node)
             << "'" << key << "' must be positive, got " << *value;
    if (*value > limit)
      return emitError(count->node)
             << "'" << key << "' is " << *value << "; at most " << limit
             << " are supported";
    *field = *value;
  }
  return success();
}

/// `stage_rank`: one rank for every stage.
LogicalResult JSONScheduleImporter::parseStageRank(Located root) {
  FailureOr<Located> placementField = getField(root, "stage_rank", "");
  if (failed(placementField))
    return failure();
  FailureOr<Located> placement = getArray(*placementField, "'stage_rank'", "");
  if (failed(placement))
    return failure();
  size_t placed = placement->value->getAsArray()->size();
  if (static_cast<int64_t>(placed) != program.numStages)
    return emitError(placement->node)
           << "'num_stages' is " << program.numStages
           << " but 'stage_rank' places " << placed << " stages";
  for (size_t stage = 0; stage < placed; ++stage) {
    Located entry = getElement(*placement, stage);
    FailureOr<int64_t> rank =
        getInteger(entry, "stage_rank[" + Twine(stage) + "]", "");
    if (failed(rank))
      return failure();
    if (*rank < 0 || *rank >= numRanks)
      return emitError(entry.node)
             << "stage " << stage << " is placed on rank " << *rank
             << ", but the schedule has " << numRanks << " ranks";
    program.stageRank.push_back(*rank);
  }
  return success();
}

/// The optional `num_replicas`, `slices` and `zero`.
LogicalResult JSONScheduleImporter::parseExtensions(Located root) {
  if (std::optional<Located> field = getOptionalField(root, "num_replicas")) {
    FailureOr<int64_t> replicas = getInteger(*field, "'num_replicas'", "");
    if (failed(replicas))
      return failure();
    if (*replicas <= 0 || *replicas > kMaxRanks)
      return emitError(field->node) << "'num_replicas' must be between 1 and "
                                    << kMaxRanks << ", got " << *replicas;
    program.numReplicas = *replicas;
    spelling.hasReplicas = true;
  }

  // pp's extension for sequence slices (Seq1F1B): the actions' `mb` index
  // slices, `num_microbatches` counts them.
  if (std::optional<Located> field = getOptionalField(root, "slices")) {
    FailureOr<int64_t> slices = getInteger(*field, "'slices'", "");
    if (failed(slices))
      return failure();
    if (*slices <= 0 || program.numMicrobatches % *slices != 0)
      return emitError(field->node)
             << "'slices' must be positive and divide 'num_microbatches' ("
             << program.numMicrobatches << "), got " << *slices;
    program.numSlices = *slices;
    spelling.hasSlices = true;
  }
  if (std::optional<Located> field = getOptionalField(root, "zero"))
    if (failed(parseZero(*field)))
      return failure();
  if (std::optional<Located> field = getOptionalField(root, "zero_gather"))
    if (failed(parseZeroGather(*field)))
      return failure();
  return success();
}

/// The entries of `field`: the field itself where it is no array (one value
/// for every stage), else its elements, which must be one per stage.
FailureOr<SmallVector<Located>>
JSONScheduleImporter::getPerStage(Located field, StringRef key) {
  if (!field.value->getAsArray())
    return SmallVector<Located>{field};
  size_t size = field.value->getAsArray()->size();
  if (static_cast<int64_t>(size) != program.numStages)
    return emitError(field.node)
           << "'" << key << "' has " << size << " entries but the schedule has "
           << program.numStages << " stages";
  return llvm::map_to_vector(llvm::seq<size_t>(0, size), [&](size_t stage) {
    return getElement(field, stage);
  });
}

LogicalResult JSONScheduleImporter::parseZero(Located field) {
  FailureOr<SmallVector<Located>> entries = getPerStage(field, "zero");
  if (failed(entries))
    return failure();
  for (Located entry : *entries) {
    FailureOr<int64_t> level = getInteger(entry, "'zero'", "");
    if (failed(level))
      return failure();
    if (*level != 0 && *level != 1 && *level != 3)
      return emitError(entry.node)
             << "'zero' must be 0, 1 or 3 (ZeRO-2 is not offered), got "
             << *level;
    program.zeroStages.push_back(*level);
  }
  return success();
}

LogicalResult JSONScheduleImporter::parseZeroGather(Located field) {
  FailureOr<SmallVector<Located>> entries = getPerStage(field, "zero_gather");
  if (failed(entries))
    return failure();
  for (auto [stage, entry] : llvm::enumerate(*entries)) {
    std::optional<StringRef> unit = entry.value->getAsString();
    if (unit != "stage" && unit != "param")
      return emitError(entry.node)
             << "'zero_gather' must be \"stage\" or \"param\"";
    // One unit for every stage applies to each stage's level.
    bool zero3 = entries->size() == 1
                     ? llvm::all_of(llvm::seq<int64_t>(0, program.numStages),
                                    [&](int64_t s) {
                                      return program.getZeroStage(s) == 3;
                                    })
                     : program.getZeroStage(stage) == 3;
    if (*unit == "param" && !zero3)
      return emitError(entry.node)
             << "'zero_gather' \"param\" needs 'zero' 3: it gathers the "
                "weights ZeRO-3 shards";
    program.gatherPerParam.push_back(*unit == "param");
  }
  return success();
}

LogicalResult JSONScheduleImporter::parseMemoryCap(Located cap) {
  auto parseOne = [&](Located value, const Twine &what) -> FailureOr<double> {
    FailureOr<double> number = getNumber(value, what, "");
    if (failed(number))
      return failure();
    if (*number <= 0)
      return emitError(value.node)
             << what << " must be positive, got " << *number;
    return *number;
  };
  if (!cap.value->getAsArray()) {
    FailureOr<double> all = parseOne(cap, "'memory_cap'");
    if (failed(all))
      return failure();
    program.memoryCap.assign(numRanks, *all);
    spelling.uniformMemoryCap = true;
    return success();
  }
  size_t size = cap.value->getAsArray()->size();
  if (static_cast<int64_t>(size) != numRanks)
    return emitError(cap.node)
           << "'memory_cap' has " << size << " entries but the schedule has "
           << numRanks << " ranks";
  for (size_t rank = 0; rank < size; ++rank) {
    FailureOr<double> value =
        parseOne(getElement(cap, rank), "'memory_cap'[" + Twine(rank) + "]");
    if (failed(value))
      return failure();
    program.memoryCap.push_back(*value);
  }
  return success();
}

FailureOr<CostAttr> JSONScheduleImporter::parseCost(Located cost) {
  if (!cost.value->getAsObject())
    return emitError(cost.node)
           << "'cost' must be an object, got " << describeKind(*cost.value);
  StringRef where = "cost: ";
  auto parseTimes = [&](StringRef key) -> FailureOr<DenseF64ArrayAttr> {
    FailureOr<Located> field = getField(cost, key, where);
    if (failed(field))
      return failure();
    FailureOr<Located> array = getArray(*field, "'" + key + "'", where);
    if (failed(array))
      return failure();
    size_t size = array->value->getAsArray()->size();
    if (static_cast<int64_t>(size) != program.numStages)
      return emitError(array->node) << where << "'" << key << "' has " << size
                                    << " entries but the schedule has "
                                    << program.numStages << " stages";
    SmallVector<double> values;
    for (size_t stage = 0; stage < size; ++stage) {
      Located entry = getElement(*array, stage);
      FailureOr<double> value =
          getNumber(entry, "'" + key + "'[" + Twine(stage) + "]", where);
      if (failed(value))
        return failure();
      if (*value < 0)
        return emitError(entry.node) << where << "'" << key << "'[" << stage
                                     << "] must not be negative";
      values.push_back(*value);
    }
    return DenseF64ArrayAttr::get(context, values);
  };
  // Each phase's times are under its action's name.
  auto parsePhaseTimes = [&](Phase phase) {
    return parseTimes(getActionSpelling(getComputeAction(phase)).json);
  };
  FailureOr<DenseF64ArrayAttr> forward = parsePhaseTimes(Phase::forward);
  if (failed(forward))
    return failure();
  FailureOr<DenseF64ArrayAttr> backwardInput =
      parsePhaseTimes(Phase::backward_input);
  if (failed(backwardInput))
    return failure();
  FailureOr<DenseF64ArrayAttr> backwardWeight =
      parsePhaseTimes(Phase::backward_weight);
  if (failed(backwardWeight))
    return failure();
  FailureOr<Located> commField = getField(cost, "comm", where);
  if (failed(commField))
    return failure();
  FailureOr<double> comm = getNumber(*commField, "'comm'", where);
  if (failed(comm))
    return failure();
  if (*comm < 0)
    return emitError(commField->node) << where << "'comm' must not be negative";
  FailureOr<DenseF64ArrayAttr> activation = parseTimes("activation");
  if (failed(activation))
    return failure();
  FailureOr<DenseF64ArrayAttr> stash = parseTimes("weight_grad_stash");
  if (failed(stash))
    return failure();
  // The attribute's own verifier checks what is left (stash <= activation).
  CostAttr attr = CostAttr::getChecked(
      [&] { return emitError(cost.node) << where; }, context, *forward,
      *backwardInput, *backwardWeight,
      FloatAttr::get(Float64Type::get(context), *comm), *activation, *stash);
  if (!attr)
    return failure();
  return attr;
}

/// The JSON ops of the actions `select` picks, in vocabulary order:
/// "F, B or W".
static std::string listJSONOps(function_ref<bool(ActionKind)> select,
                               StringRef lastSeparator) {
  SmallVector<StringRef> names;
  for (const ActionSpelling &spelling : getActionVocabulary())
    if (!spelling.json.empty() && select(spelling.kind))
      names.push_back(spelling.json);
  return llvm::formatv("{0} {1} {2}",
                       llvm::join(ArrayRef(names).drop_back(), ", "),
                       lastSeparator, names.back());
}

FailureOr<sched::ProgramAction>
JSONScheduleImporter::parseAction(Located action, StringRef where) {
  using Kind = sched::TimedAction::Kind;
  if (!action.value->getAsObject())
    return emitError(action.node) << where << "expected an action object, got "
                                  << describeKind(*action.value);
  FailureOr<Located> opField = getField(action, "op", where);
  if (failed(opField))
    return failure();
  std::optional<StringRef> opName = opField->value->getAsString();
  if (!opName)
    return emitError(opField->node) << where << "'op' must be a string, got "
                                    << describeKind(*opField->value);
  std::optional<ActionKind> kind = lookupJSONAction(*opName);
  if (!kind)
    return emitError(opField->node)
           << where << "unknown op '" << *opName << "'; expected "
           << listJSONOps([](ActionKind) { return true; }, "or");

  // pp's extension: only a transfer can be posted in an exchange group.
  auto isTransfer = [](ActionKind kind) {
    return getTransfer(kind).has_value();
  };
  if (std::optional<Located> grouped = getOptionalField(action, "grouped");
      grouped && !isTransfer(*kind))
    return emitError(grouped->node)
           << where << "'grouped' applies only to "
           << listJSONOps(isTransfer, "and") << ", not " << *opName;

  sched::ProgramAction parsed;
  FailureOr<int64_t> stage =
      getIndexField(action, "stage", where, program.numStages, "stages");
  if (failed(stage))
    return failure();
  parsed.stage = *stage;
  std::optional<Kind> stageOnly;
  if (*kind == ActionKind::AllReduce)
    stageOnly = Kind::allReduce;
  else if (*kind == ActionKind::ReduceScatter)
    stageOnly = Kind::reduceScatter;
  else if (*kind == ActionKind::AllGather)
    stageOnly = Kind::allGather;
  else if (*kind == ActionKind::OptimizerStep)
    stageOnly = Kind::optimizerStep;
  if (stageOnly) {
    parsed.kind = *stageOnly;
    return parsed;
  }

  FailureOr<int64_t> mb = getIndexField(
      action, "mb", where, program.numMicrobatches, "micro-batches");
  if (failed(mb))
    return failure();
  parsed.mb = *mb;
  if (std::optional<Phase> phase = getComputePhase(*kind)) {
    parsed.phase = *phase;
    return parsed;
  }

  FailureOr<int64_t> peer =
      getIndexField(action, "peer", where, numRanks, "ranks");
  if (failed(peer))
    return failure();
  FailureOr<bool> grouped = getGrouped(action, where);
  if (failed(grouped))
    return failure();
  // The op verifier checks that a grouped transfer follows another one.
  TransferAction transfer = *getTransfer(*kind);
  parsed.kind = transfer.isSend ? Kind::send : Kind::recv;
  parsed.transfer = transfer.kind;
  parsed.peer = *peer;
  parsed.grouped = *grouped;
  return parsed;
}

FailureOr<bool> JSONScheduleImporter::getGrouped(Located action,
                                                 StringRef where) {
  std::optional<Located> field = getOptionalField(action, "grouped");
  if (!field)
    return false;
  if (std::optional<bool> value = field->value->getAsBoolean())
    return *value;
  return emitError(field->node) << where << "'grouped' must be a boolean, got "
                                << describeKind(*field->value);
}

LogicalResult JSONScheduleImporter::parseRank(Located actions, int64_t rank) {
  if (failed(getArray(actions, "rank " + Twine(rank), "")))
    return failure();
  rankLocs.push_back(getLoc(actions.node));
  auto &parsed = program.ranks.emplace_back();
  auto &locs = actionLocs.emplace_back();
  for (size_t i = 0, e = actions.value->getAsArray()->size(); i < e; ++i) {
    std::string where =
        ("action " + Twine(i) + " of rank " + Twine(rank) + ": ").str();
    Located element = getElement(actions, i);
    FailureOr<sched::ProgramAction> action = parseAction(element, where);
    if (failed(action))
      return failure();
    parsed.push_back(*action);
    locs.push_back(getLoc(element.node));
  }
  return success();
}

/// The byte offset and message of an llvm::json::parse error, whose fields
/// are private but whose message is "[line:column, byte=offset]: message".
static std::pair<size_t, std::string> getSyntaxError(llvm::Error error) {
  std::string message = llvm::toString(std::move(error));
  SmallVector<StringRef, 3> match;
  size_t offset = 0;
  if (llvm::Regex("byte=([0-9]+)\\]: (.*)").match(message, &match)) {
    match[1].getAsInteger(10, offset);
    return {offset, match[2].str()};
  }
  return {offset, message};
}

OwningOpRef<ModuleOp> JSONScheduleImporter::import() {
  StringRef text = locator.getText();
  // llvm::json parses and destroys values recursively.
  if (std::optional<size_t> tooDeep = findTooDeepJSON(text)) {
    mlir::emitError(locator.getLoc(*tooDeep))
        << "JSON nested more than " << kMaxJSONDepth << " levels deep";
    return nullptr;
  }
  llvm::Expected<llvm::json::Value> document = llvm::json::parse(text);
  if (!document) {
    auto [offset, message] = getSyntaxError(document.takeError());
    // The parser reports most errors just after the character it rejected.
    if (offset > 0 && offset <= text.size() &&
        !StringRef(" \t\r\n").contains(text[offset - 1]))
      --offset;
    mlir::emitError(locator.getLoc(offset)) << "invalid JSON: " << message;
    return nullptr;
  }
  positions.emplace(text);
  if (const auto &duplicate = positions->getDuplicateKey()) {
    InFlightDiagnostic diag = mlir::emitError(locator.getLoc(duplicate->second))
                              << "duplicate key '" << duplicate->key << "'";
    diag.attachNote(locator.getLoc(duplicate->first)) << "first written here";
    return nullptr;
  }
  Located root{&*document, JSONPositions::root};
  if (!document->getAsObject()) {
    emitError(root.node) << "expected a pp-schedule-v1 object, got "
                         << describeKind(*document);
    return nullptr;
  }
  if (failed(parseHeader(root)))
    return nullptr;

  FailureOr<Located> ranksField = getField(root, "ranks", "");
  if (failed(ranksField))
    return nullptr;
  FailureOr<Located> ranks = getArray(*ranksField, "'ranks'", "");
  if (failed(ranks))
    return nullptr;
  size_t numRankLists = ranks->value->getAsArray()->size();
  if (static_cast<int64_t>(numRankLists) != numRanks) {
    emitError(ranks->node) << "'num_ranks' is " << numRanks
                           << " but 'ranks' holds " << numRankLists
                           << " action lists";
    return nullptr;
  }

  for (int64_t rank = 0; rank < numRanks; ++rank)
    if (failed(parseRank(getElement(*ranks, rank), rank)))
      return nullptr;
  Location loc = getLoc(root.node);
  return writeImportedProgram(context, program, spelling,
                              [&](sched::ProgramSite site) -> Location {
                                if (site.rank < 0)
                                  return loc;
                                if (site.action < 0)
                                  return rankLocs[site.rank];
                                return actionLocs[site.rank][site.action];
                              });
}

OwningOpRef<ModuleOp>
mlir::pp::importScheduleFromJSON(llvm::SourceMgr &sourceMgr,
                                 MLIRContext *context) {
  context->loadDialect<PPDialect>();
  return JSONScheduleImporter(sourceMgr, context).import();
}
