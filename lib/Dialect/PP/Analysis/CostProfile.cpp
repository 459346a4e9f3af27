//===- CostProfile.cpp - read pp-profile-v1 cost files --------------------===//
//
// Parses the per-stage cost profile of docs/CostProfile.md. Every error names
// the file and the offending entry as a JSON path (`stages[1].forward`).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/CostProfile.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/MicrobatchPlan.h"
#include "pp/Dialect/PP/Utils/InputFile.h"
#include "pp/Dialect/PP/Utils/JSONDepth.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/xxhash.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace json = llvm::json;

static constexpr llvm::StringLiteral kFormat = "pp-profile-v1";
static constexpr StringRef kProfileFields[] = {
    "format",     "time_unit", "memory_unit",   "transfer",
    "memory_cap", "stages",    "step_overhead", "meta"};
static constexpr StringRef kStageFields[] = {
    "stage",           "forward",           "backward_input",
    "backward_weight", "activation_memory", "stash_memory",
    "optimizer",       "microbatches",      "variants"};
static constexpr StringRef kMicrobatchFields[] = {
    "microbatch",      "forward",           "backward_input",
    "backward_weight", "activation_memory", "stash_memory"};
static constexpr StringRef kVariantFields[] = {
    "variant",         "forward",           "backward_input",
    "backward_weight", "activation_memory", "stash_memory"};

CostProfile CostProfile::getUnit(int64_t numStages) {
  CostProfile profile;
  profile.stages.resize(numStages);
  return profile;
}

SmallVector<double> CostProfile::getColumn(double StageProfile::*field) const {
  return llvm::to_vector(llvm::map_range(
      stages, [&](const StageProfile &stage) { return stage.*field; }));
}

SmallVector<double>
CostProfile::getMicrobatchColumn(double StageProfile::*field) const {
  SmallVector<double> column;
  for (const StageProfile &stage : stages)
    for (const StageProfile &mb : stage.microbatches)
      column.push_back(mb.*field);
  return column;
}

StageCosts CostProfile::getStageCosts() const {
  StageCosts costs;
  costs.forward = getColumn(&StageProfile::forward);
  costs.backwardInput = getColumn(&StageProfile::backwardInput);
  costs.backwardWeight = getColumn(&StageProfile::backwardWeight);
  costs.activation = getColumn(&StageProfile::activationMemory);
  costs.stash = getColumn(&StageProfile::stashMemory);
  costs.transfer = transfer;
  if (int64_t numMicrobatches = getNumMicrobatches()) {
    MicrobatchCosts &table = costs.perMicrobatch;
    table.numMicrobatches = numMicrobatches;
    table.forward = getMicrobatchColumn(&StageProfile::forward);
    table.backwardInput = getMicrobatchColumn(&StageProfile::backwardInput);
    table.backwardWeight = getMicrobatchColumn(&StageProfile::backwardWeight);
    table.activation = getMicrobatchColumn(&StageProfile::activationMemory);
    table.stash = getMicrobatchColumn(&StageProfile::stashMemory);
  }
  for (const StageProfile &stage : stages)
    if (stage.optimizer)
      costs.optimizer.push_back(*stage.optimizer);
  costs.stepOverhead = stepOverhead;
  return costs;
}

/// `value` as written in a diagnostic, shortened if long.
static std::string formatValue(const json::Value &value) {
  std::string text = llvm::formatv("{0}", value).str();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

namespace {
/// Reads one parsed document. `entry` arguments are JSON paths of the value
/// being read, "" for the document itself.
class CostProfileReader {
public:
  CostProfileReader(StringRef fileName, CostProfileErrorFn emitError)
      : fileName(fileName), emitError(emitError) {}

  FailureOr<CostProfile> read(const json::Value &document);

private:
  /// An error about `entry`, prefixed with the file.
  InFlightDiagnostic error(const Twine &entry) {
    InFlightDiagnostic diag = emitError();
    diag << "cost file '" << fileName << "': ";
    if (!entry.isTriviallyEmpty())
      diag << entry << " ";
    return diag;
  }

  /// Fails on a field of `object` that is not in `known`.
  LogicalResult checkFields(const json::Object &object, const Twine &entry,
                            ArrayRef<StringRef> known);
  FailureOr<const json::Value *> getField(const json::Object &object,
                                          StringRef key, const Twine &entry);
  FailureOr<StringRef> getString(const json::Object &object, StringRef key);
  /// A number that must not be negative.
  FailureOr<double> getAmount(const json::Object &object, StringRef key,
                              const Twine &entry);
  FailureOr<double> getAmount(const json::Value &value,
                              const std::string &path);
  /// `memory_cap`: a number or a list of them, each positive; none when
  /// absent.
  FailureOr<SmallVector<double>> readMemoryCap(const json::Object &root);
  FailureOr<StageProfile> readStage(const json::Value &value, size_t index);
  /// The five cost fields of a stage or micro-batch entry.
  LogicalResult readCosts(const json::Object &object, const std::string &entry,
                          StageProfile &profile);
  /// A stage's `microbatches` or `variants`: each entry {key: i,
  /// costs...} with `fields`, the i-th in order.
  LogicalResult readIndexedCosts(const json::Value &value,
                                 const std::string &entry,
                                 ArrayRef<StringRef> fields,
                                 std::vector<StageProfile> &costs);

  StringRef fileName;
  CostProfileErrorFn emitError;
};
} // namespace

/// `entry.key` as a JSON path.
static std::string getPath(const Twine &entry, StringRef key) {
  return entry.isTriviallyEmpty() ? key.str() : (entry + "." + key).str();
}

LogicalResult CostProfileReader::checkFields(const json::Object &object,
                                             const Twine &entry,
                                             ArrayRef<StringRef> known) {
  for (const auto &[key, value] : object)
    if (!llvm::is_contained(known, StringRef(key)))
      return error(entry.isTriviallyEmpty() ? "" : entry + ":")
             << "has an unknown field '" << StringRef(key)
             << "'; expected: " << llvm::join(known, ", ");
  return success();
}

FailureOr<const json::Value *>
CostProfileReader::getField(const json::Object &object, StringRef key,
                            const Twine &entry) {
  if (const json::Value *value = object.get(key))
    return value;
  return error(entry.isTriviallyEmpty() ? "" : entry + ":")
         << "lacks the field '" << key << "'";
}

FailureOr<StringRef> CostProfileReader::getString(const json::Object &object,
                                                  StringRef key) {
  FailureOr<const json::Value *> value = getField(object, key, "");
  if (failed(value))
    return failure();
  std::optional<StringRef> text = (*value)->getAsString();
  if (!text || text->empty())
    return error(key) << "must be a non-empty string, got "
                      << formatValue(**value);
  return *text;
}

FailureOr<double> CostProfileReader::getAmount(const json::Object &object,
                                               StringRef key,
                                               const Twine &entry) {
  FailureOr<const json::Value *> value = getField(object, key, entry);
  if (failed(value))
    return failure();
  return getAmount(**value, getPath(entry, key));
}

FailureOr<double> CostProfileReader::getAmount(const json::Value &value,
                                               const std::string &path) {
  std::optional<double> number = value.getAsNumber();
  if (!number)
    return error(path) << "must be a number, got " << formatValue(value);
  if (!std::isfinite(*number))
    return error(path) << "is out of the range of a double";
  if (*number < 0)
    return error(path) << "must not be negative, got "
                       << formatQuantity(*number);
  // Larger amounts overflow the sums of a simulation.
  if (*number > kMaxQuantity)
    return error(path) << "must be at most " << kMaxQuantityText << ", got "
                       << formatQuantity(*number);
  return *number;
}

FailureOr<StageProfile> CostProfileReader::readStage(const json::Value &value,
                                                     size_t index) {
  std::string entry = ("stages[" + Twine(index) + "]").str();
  const json::Object *object = value.getAsObject();
  if (!object)
    return error(entry) << "must be an object, got " << formatValue(value);
  if (failed(checkFields(*object, entry, kStageFields)))
    return failure();
  FailureOr<const json::Value *> stage = getField(*object, "stage", entry);
  if (failed(stage))
    return failure();
  std::optional<int64_t> number = (*stage)->getAsInteger();
  if (!number || *number != static_cast<int64_t>(index))
    return error(entry + ".stage")
           << "must be " << index << ": stages are listed in order";

  StageProfile profile;
  if (failed(readCosts(*object, entry, profile)))
    return failure();
  if (object->get("optimizer")) {
    FailureOr<double> optimizer = getAmount(*object, "optimizer", entry);
    if (failed(optimizer))
      return failure();
    profile.optimizer = *optimizer;
  }
  if (const json::Value *microbatches = object->get("microbatches"))
    if (failed(readIndexedCosts(*microbatches, entry + ".microbatches",
                                kMicrobatchFields, profile.microbatches)))
      return failure();
  if (const json::Value *variants = object->get("variants"))
    if (failed(readIndexedCosts(*variants, entry + ".variants", kVariantFields,
                                profile.variants)))
      return failure();
  return profile;
}

LogicalResult CostProfileReader::readIndexedCosts(
    const json::Value &value, const std::string &entry,
    ArrayRef<StringRef> fields, std::vector<StageProfile> &costs) {
  StringRef key = fields.front();
  const json::Array *list = value.getAsArray();
  if (!list || list->empty())
    return error(entry) << "must be a non-empty array, got "
                        << formatValue(value);
  for (auto [index, item] : llvm::enumerate(*list)) {
    std::string path = (entry + "[" + Twine(index) + "]").str();
    const json::Object *object = item.getAsObject();
    if (!object)
      return error(path) << "must be an object, got " << formatValue(item);
    if (failed(checkFields(*object, path, fields)))
      return failure();
    FailureOr<const json::Value *> number = getField(*object, key, path);
    if (failed(number))
      return failure();
    std::optional<int64_t> at = (*number)->getAsInteger();
    if (!at || *at != static_cast<int64_t>(index))
      return error(path + "." + key)
             << "must be " << index << ": entries are listed in order";
    StageProfile entryCosts;
    if (failed(readCosts(*object, path, entryCosts)))
      return failure();
    costs.push_back(entryCosts);
  }
  return success();
}

LogicalResult CostProfileReader::readCosts(const json::Object &object,
                                           const std::string &entry,
                                           StageProfile &profile) {
  std::pair<StringRef, double *> fields[] = {
      {"forward", &profile.forward},
      {"backward_input", &profile.backwardInput},
      {"backward_weight", &profile.backwardWeight},
      {"activation_memory", &profile.activationMemory},
      {"stash_memory", &profile.stashMemory}};
  for (auto [key, field] : fields) {
    FailureOr<double> amount = getAmount(object, key, entry);
    if (failed(amount))
      return failure();
    *field = *amount;
  }
  if (profile.stashMemory > profile.activationMemory)
    return error(entry + ".stash_memory")
           << formatQuantity(profile.stashMemory)
           << " exceeds the activation_memory "
           << formatQuantity(profile.activationMemory) << " it is part of";
  return success();
}

FailureOr<SmallVector<double>>
CostProfileReader::readMemoryCap(const json::Object &root) {
  const json::Value *value = root.get("memory_cap");
  if (!value)
    return SmallVector<double>();
  const json::Array *list = value->getAsArray();
  if (list && list->empty())
    return error("memory_cap") << "must be a number or a non-empty array";
  SmallVector<double> caps;
  for (size_t rank = 0, e = list ? list->size() : 1; rank < e; ++rank) {
    std::string path =
        list ? ("memory_cap[" + Twine(rank) + "]").str() : "memory_cap";
    FailureOr<double> cap = getAmount(list ? (*list)[rank] : *value, path);
    if (failed(cap))
      return failure();
    if (*cap == 0)
      return error(path) << "must be positive (leave it out for no cap)";
    caps.push_back(*cap);
  }
  return caps;
}

FailureOr<CostProfile> CostProfileReader::read(const json::Value &document) {
  const json::Object *root = document.getAsObject();
  if (!root)
    return error("") << "must hold a " << kFormat << " object, got "
                     << formatValue(document);
  if (failed(checkFields(*root, "", kProfileFields)))
    return failure();
  FailureOr<StringRef> format = getString(*root, "format");
  if (failed(format))
    return failure();
  if (*format != kFormat)
    return error("format") << "must be \"" << kFormat << "\", got \"" << *format
                           << "\"";

  CostProfile profile;
  std::pair<StringRef, std::string *> units[] = {
      {"time_unit", &profile.timeUnit}, {"memory_unit", &profile.memoryUnit}};
  for (auto [key, field] : units) {
    FailureOr<StringRef> unit = getString(*root, key);
    if (failed(unit))
      return failure();
    *field = unit->str();
  }

  FailureOr<double> transfer = getAmount(*root, "transfer", "");
  if (failed(transfer))
    return failure();
  profile.transfer = *transfer;
  if (root->get("step_overhead")) {
    FailureOr<double> overhead = getAmount(*root, "step_overhead", "");
    if (failed(overhead))
      return failure();
    profile.stepOverhead = *overhead;
  }
  FailureOr<SmallVector<double>> caps = readMemoryCap(*root);
  if (failed(caps))
    return failure();
  profile.memoryCap = std::move(*caps);

  // What a profiler measured on; other tools' meta is theirs.
  if (const json::Object *meta = root->getObject("meta")) {
    profile.measuredMicrobatches = meta->getInteger("microbatches");
    if (std::optional<StringRef> model = meta->getString("model"))
      profile.modelFingerprint = model->str();
  }

  FailureOr<const json::Value *> stagesField = getField(*root, "stages", "");
  if (failed(stagesField))
    return failure();
  const json::Array *stages = (*stagesField)->getAsArray();
  if (!stages || stages->empty())
    return error("stages") << "must be a non-empty array, got "
                           << formatValue(**stagesField);
  for (auto [index, value] : llvm::enumerate(*stages)) {
    FailureOr<StageProfile> stage = readStage(value, index);
    if (failed(stage))
      return failure();
    if (!profile.stages.empty() &&
        stage->microbatches.size() !=
            profile.stages.front().microbatches.size())
      return error(("stages[" + Twine(index) + "].microbatches").str())
             << "must list as many micro-batches as stages[0] does ("
             << profile.stages.front().microbatches.size() << ")";
    if (!profile.stages.empty() &&
        stage->variants.size() != profile.stages.front().variants.size())
      return error(("stages[" + Twine(index) + "].variants").str())
             << "must list as many shape variants as stages[0] does ("
             << profile.stages.front().variants.size() << ")";
    if (!profile.stages.empty() &&
        stage->optimizer.has_value() !=
            profile.stages.front().optimizer.has_value())
      return error(("stages[" + Twine(index) + "]").str())
             << "must give optimizer as stages[0] does, or not at all";
    profile.stages.push_back(*stage);
  }
  return profile;
}

FailureOr<CostProfile>
mlir::pp::parseCostProfile(StringRef text, StringRef fileName,
                           CostProfileErrorFn emitError) {
  // llvm::json parses and destroys values recursively.
  if (std::optional<size_t> tooDeep = findTooDeepJSON(text)) {
    auto [line, column] = getLineAndColumn(text, *tooDeep);
    return emitError() << "cost file '" << fileName << "' is not valid: line "
                       << line << ", column " << column
                       << ": JSON nested more than " << kMaxJSONDepth
                       << " levels deep";
  }
  llvm::Expected<json::Value> document = json::parse(text);
  if (!document) {
    // llvm::json writes "[line:column, byte=offset]: message".
    std::string message = llvm::toString(document.takeError());
    SmallVector<StringRef, 4> match;
    InFlightDiagnostic diag = emitError();
    diag << "cost file '" << fileName << "' is not valid JSON: ";
    if (llvm::Regex("^\\[([0-9]+):([0-9]+), byte=[0-9]+\\]: (.*)$")
            .match(message, &match))
      diag << "line " << match[1] << ", column " << match[2] << ": "
           << match[3];
    else
      diag << message;
    return diag;
  }
  return CostProfileReader(fileName, emitError).read(*document);
}

FailureOr<CostProfile> mlir::pp::readCostProfile(StringRef path,
                                                 CostProfileErrorFn emitError) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readRegularFile(path, kMaxJSONFileBytes);
  if (!buffer)
    return emitError() << "cannot read cost file '" << path
                       << "': " << llvm::toString(buffer.takeError());
  return parseCostProfile((*buffer)->getBuffer(), path, emitError);
}

std::string CostProfile::checkModel(ModuleOp module) const {
  auto model = module->getAttrOfType<StringAttr>(kModelFingerprintAttr);
  if (!model || modelFingerprint.empty() ||
      model.getValue() == modelFingerprint)
    return "";
  return ("was measured on another model (" + modelFingerprint +
          "; this one is " + model.getValue() +
          "): profile this model with pp-compile --emit=profile")
      .str();
}

std::string mlir::pp::getModelFingerprint(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().elideLargeElementsAttrs(16));
  return llvm::utohexstr(llvm::xxh3_64bits(text), /*LowerCase=*/true, 16);
}

std::string CostProfile::checkShape(int64_t numStages,
                                    int64_t numMicrobatches) const {
  // Per-stage costs do not depend on how many ranks ran them (pp-compile
  // --emit=profile times every stage in one process); micro-batches set
  // the shape each stage computes on, except where the profile measured
  // each shape variant (a program of step plans runs as many micro-batches
  // as each step's plan has).
  if (int64_t(stages.size()) == numStages &&
      (!measuredMicrobatches || *measuredMicrobatches == numMicrobatches ||
       getNumVariants()))
    return "";
  std::string why;
  llvm::raw_string_ostream os(why);
  os << "was measured on " << stages.size() << " stages";
  if (measuredMicrobatches)
    os << " and " << *measuredMicrobatches << " micro-batches";
  os << "; this pipeline has " << numStages << " stages and " << numMicrobatches
     << " micro-batches: profile the program this compiles";
  return why;
}
