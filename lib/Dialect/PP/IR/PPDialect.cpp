//===- PPDialect.cpp - pp dialect registration ----------------------------===//
//
// Registers the pp dialect's ops and attributes.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pp;

#include "pp/Dialect/PP/IR/PPOpsDialect.cpp.inc"

/// Parses `[v, ...]` of f64 literals, decimal or hexadecimal.
static ParseResult parseExactF64Array(AsmParser &parser,
                                      DenseF64ArrayAttr &array) {
  SmallVector<double> values;
  auto parseElement = [&]() -> ParseResult {
    APFloat value(0.0);
    if (parser.parseFloat(llvm::APFloat::IEEEdouble(), value))
      return failure();
    values.push_back(value.convertToDouble());
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     parseElement))
    return failure();
  array = DenseF64ArrayAttr::get(parser.getContext(), values);
  return success();
}

/// Prints `[v, ...]` with every element in a form that parses back to the
/// same double.
static void printExactF64Array(AsmPrinter &printer, DenseF64ArrayAttr array) {
  printer << '[';
  llvm::interleaveComma(array.asArrayRef(), printer, [&](double value) {
    printer.printFloat(APFloat(value));
  });
  printer << ']';
}

/// The keywords of the per-micro-batch tables, in the order of
/// CostAttr::getMicrobatchTables.
static constexpr llvm::StringLiteral kMicrobatchTables[] = {
    "microbatch_forward", "microbatch_backward_input",
    "microbatch_backward_weight", "microbatch_activation", "microbatch_stash"};

/// Parses a table `[[v, ...], ...]` of equally long rows into `table`, row
/// by row.
static ParseResult parseF64Table(AsmParser &parser, DenseF64ArrayAttr &table) {
  SmallVector<double> values;
  std::optional<size_t> width;
  auto parseRow = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    DenseF64ArrayAttr row;
    if (parseExactF64Array(parser, row))
      return failure();
    if (width && *width != row.size())
      return parser.emitError(loc, "every row of a per-micro-batch table "
                                   "must have the same length");
    width = row.size();
    llvm::append_range(values, row.asArrayRef());
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseRow))
    return failure();
  table = DenseF64ArrayAttr::get(parser.getContext(), values);
  return success();
}

Attribute CostAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  DenseF64ArrayAttr forward, input, weight, activation, stash;
  FloatAttr comm;
  auto field = [&](StringRef keyword, DenseF64ArrayAttr &array) {
    return failure(parser.parseKeyword(keyword) || parser.parseEqual() ||
                   parseExactF64Array(parser, array));
  };
  if (parser.parseLess() || failed(field("forward", forward)) ||
      parser.parseComma() || failed(field("backward_input", input)) ||
      parser.parseComma() || failed(field("backward_weight", weight)) ||
      parser.parseComma() || parser.parseKeyword("comm") || parser.parseEqual())
    return {};
  FailureOr<FloatAttr> commAttr = FieldParser<FloatAttr>::parse(parser);
  if (failed(commAttr) || parser.parseComma() ||
      failed(field("activation", activation)) || parser.parseComma() ||
      failed(field("stash", stash)))
    return {};
  comm = *commAttr;
  std::array<DenseF64ArrayAttr, 5> tables;
  DenseF64ArrayAttr optimizer;
  FloatAttr stepOverhead;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc at = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return {};
    if ((keyword == "optimizer" && optimizer) ||
        (keyword == "step_overhead" && stepOverhead))
      return parser.emitError(at, "'") << keyword << "' is given twice",
             Attribute();
    if (keyword == "optimizer") {
      if (parser.parseEqual() || parseExactF64Array(parser, optimizer))
        return {};
      continue;
    }
    if (keyword == "step_overhead") {
      FailureOr<FloatAttr> value;
      if (parser.parseEqual() ||
          failed(value = FieldParser<FloatAttr>::parse(parser)))
        return {};
      stepOverhead = *value;
      continue;
    }
    auto *known = llvm::find(kMicrobatchTables, keyword);
    if (known == std::end(kMicrobatchTables))
      return parser.emitError(at, "expected optimizer, step_overhead or a "
                                  "per-micro-batch table (")
                 << llvm::join(ArrayRef<llvm::StringLiteral>(kMicrobatchTables),
                               ", ")
                 << "), got '" << keyword << "'",
             Attribute();
    DenseF64ArrayAttr &table = tables[known - std::begin(kMicrobatchTables)];
    if (table)
      return parser.emitError(at, "'") << keyword << "' is given twice",
             Attribute();
    if (parser.parseEqual() || parseF64Table(parser, table))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<CostAttr>(
      loc, context, forward, input, weight, comm, activation, stash, tables[0],
      tables[1], tables[2], tables[3], tables[4], optimizer, stepOverhead);
}

void CostAttr::print(AsmPrinter &printer) const {
  printer << "<forward = ";
  printExactF64Array(printer, getForward());
  printer << ", backward_input = ";
  printExactF64Array(printer, getBackwardInput());
  printer << ", backward_weight = ";
  printExactF64Array(printer, getBackwardWeight());
  printer << ", comm = ";
  printer.printStrippedAttrOrType(getComm());
  printer << ", activation = ";
  printExactF64Array(printer, getActivation());
  printer << ", stash = ";
  printExactF64Array(printer, getStash());
  if (getOptimizer()) {
    printer << ", optimizer = ";
    printExactF64Array(printer, getOptimizer());
  }
  if (getStepOverhead()) {
    printer << ", step_overhead = ";
    printer.printStrippedAttrOrType(getStepOverhead());
  }
  int64_t width = getNumMicrobatches();
  for (auto [keyword, table] :
       llvm::zip_equal(kMicrobatchTables, getMicrobatchTables())) {
    if (!table)
      continue;
    printer << ", " << keyword << " = [";
    ArrayRef<double> values = table.asArrayRef();
    for (int64_t s = 0, e = getNumStages(); s < e; ++s) {
      if (s > 0)
        printer << ", ";
      printExactF64Array(
          printer,
          DenseF64ArrayAttr::get(getContext(), values.slice(s * width, width)));
    }
    printer << ']';
  }
  printer << '>';
}

int64_t CostAttr::getNumMicrobatches() const {
  for (DenseF64ArrayAttr table : getMicrobatchTables())
    if (table && getNumStages() > 0)
      return table.size() / getNumStages();
  return 0;
}

#define GET_ATTRDEF_CLASSES
#include "pp/Dialect/PP/IR/PPAttrs.cpp.inc"

void PPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "pp/Dialect/PP/IR/PPOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "pp/Dialect/PP/IR/PPAttrs.cpp.inc"
      >();
}

CostAttr CostAttr::getUnit(MLIRContext *context, int64_t numStages) {
  Builder b(context);
  auto filled = [&](double value) {
    return b.getDenseF64ArrayAttr(SmallVector<double>(numStages, value));
  };
  return CostAttr::get(context, filled(1.0), filled(1.0), filled(1.0),
                       b.getF64FloatAttr(0.0), filled(1.0), filled(0.0));
}

LogicalResult CostAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, DenseF64ArrayAttr forward,
    DenseF64ArrayAttr backwardInput, DenseF64ArrayAttr backwardWeight,
    FloatAttr comm, DenseF64ArrayAttr activation, DenseF64ArrayAttr stash,
    DenseF64ArrayAttr microbatchForward,
    DenseF64ArrayAttr microbatchBackwardInput,
    DenseF64ArrayAttr microbatchBackwardWeight,
    DenseF64ArrayAttr microbatchActivation, DenseF64ArrayAttr microbatchStash,
    DenseF64ArrayAttr optimizer, FloatAttr stepOverhead) {
  size_t stages = forward.size();
  auto isFinite = [](double v) { return std::isfinite(v); };
  std::array<DenseF64ArrayAttr, 5> tables = {
      microbatchForward, microbatchBackwardInput, microbatchBackwardWeight,
      microbatchActivation, microbatchStash};
  std::optional<size_t> tableSize;
  for (DenseF64ArrayAttr table : tables) {
    if (!table)
      continue;
    if (table.empty() || stages == 0 || table.size() % stages != 0)
      return emitError() << "per-micro-batch cost tables must have one "
                            "non-empty row per stage";
    if (tableSize && *tableSize != table.size())
      return emitError() << "per-micro-batch cost tables must all describe "
                            "the same micro-batches";
    tableSize = table.size();
  }
  SmallVector<DenseF64ArrayAttr> fields = {forward, backwardInput,
                                           backwardWeight, activation, stash};
  if (optimizer)
    fields.push_back(optimizer);
  size_t perStage = fields.size();
  for (DenseF64ArrayAttr table : tables)
    if (table)
      fields.push_back(table);
  for (auto [i, field] : llvm::enumerate(fields)) {
    if (i < perStage && field.size() != stages)
      return emitError() << "cost arrays must all have one entry per stage";
    if (!llvm::all_of(field.asArrayRef(), isFinite))
      return emitError() << "costs must be finite";
    if (llvm::any_of(field.asArrayRef(), [](double v) { return v < 0; }))
      return emitError() << "costs must not be negative";
    if (!llvm::all_of(field.asArrayRef(), isValidQuantity))
      return emitError() << "costs must be at most " << kMaxQuantityText;
  }
  for (FloatAttr scalar : {comm, stepOverhead}) {
    if (!scalar)
      continue;
    double value = scalar.getValueAsDouble();
    if (!isFinite(value))
      return emitError() << "costs must be finite";
    if (value < 0)
      return emitError() << "costs must not be negative";
    if (!isValidQuantity(value))
      return emitError() << "costs must be at most " << kMaxQuantityText;
  }
  // Per (stage, micro-batch), each field from its table or its stage.
  size_t width = tableSize ? *tableSize / stages : 1;
  auto at = [&](DenseF64ArrayAttr perStage, DenseF64ArrayAttr table, size_t s,
                size_t mb) {
    return table ? table[s * width + mb] : perStage[s];
  };
  for (size_t s = 0; s < stages; ++s)
    for (size_t mb = 0; tableSize && mb < width; ++mb) {
      double held = at(activation, microbatchActivation, s, mb);
      double kept = at(stash, microbatchStash, s, mb);
      if (kept > held)
        return emitError()
               << "stage " << s << " micro-batch " << mb << " stashes "
               << llvm::formatv("{0}", llvm::format("%g", kept)).str()
               << " for W but holds only "
               << llvm::formatv("{0}", llvm::format("%g", held)).str();
    }
  for (size_t s = 0; s < stages; ++s)
    if (stash[s] > activation[s])
      return emitError()
             << "stage " << s << " stashes "
             << llvm::formatv("{0}", llvm::format("%g", stash[s])).str()
             << " for W but holds only "
             << llvm::formatv("{0}", llvm::format("%g", activation[s])).str();
  return success();
}
