//===- Slot.cpp - names of the runtime buffers stage functions use --------===//
//
// Slot kinds and `#pp.slot`: its parser, printer and verifier.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/Slot.h"
#include "pp/Dialect/PP/IR/PPDialect.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::pp;

bool mlir::pp::slotKindHasStage(SlotKind kind) {
  return kind == SlotKind::Activation || kind == SlotKind::Gradient ||
         kind == SlotKind::Saved || kind == SlotKind::Stash ||
         kind == SlotKind::Carry || kind == SlotKind::CarryGrad;
}

bool mlir::pp::slotKindHasIndex(SlotKind kind) {
  return kind != SlotKind::Loss && kind != SlotKind::LossGrad;
}

/// What the number of a stage slot counts: a stage's outputs, or the values
/// its backward keeps.
static StringRef getIndexKeyword(SlotKind kind) {
  return kind == SlotKind::Activation || kind == SlotKind::Gradient ? "output"
                                                                    : "value";
}

//===----------------------------------------------------------------------===//
// SlotAttr
//===----------------------------------------------------------------------===//

// `<act stage 0 output 1>`, `<saved stage 2 value 0>`, `<param 3>`, `<loss>`.
Attribute SlotAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<SlotKind> kind = symbolizeSlotKind(keyword);
  if (!kind) {
    parser.emitError(loc, "unknown slot kind '")
        << keyword << "'; expected param, data, target, act, grad, saved, "
        << "stash, param_grad, loss, loss_grad, state, state_update, carry or "
        << "carry_grad";
    return {};
  }
  int64_t stage = 0, index = 0;
  if (slotKindHasStage(*kind) &&
      (parser.parseKeyword("stage") || parser.parseInteger(stage) ||
       parser.parseKeyword(getIndexKeyword(*kind))))
    return {};
  if (slotKindHasIndex(*kind) && parser.parseInteger(index))
    return {};
  if (parser.parseGreater())
    return {};
  return SlotAttr::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), *kind, stage, index);
}

void SlotAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifySlotKind(getKind());
  if (slotKindHasStage(getKind()))
    printer << " stage " << getStage() << ' ' << getIndexKeyword(getKind());
  if (slotKindHasIndex(getKind()))
    printer << ' ' << getIndex();
  printer << '>';
}

LogicalResult SlotAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               SlotKind kind, int64_t stage, int64_t index) {
  if (stage < 0 || index < 0)
    return emitError() << "slot numbers must not be negative";
  if (!slotKindHasStage(kind) && stage != 0)
    return emitError() << "a '" << stringifySlotKind(kind)
                       << "' slot has no stage";
  if (!slotKindHasIndex(kind) && index != 0)
    return emitError() << "a '" << stringifySlotKind(kind)
                       << "' slot has no number";
  return success();
}
