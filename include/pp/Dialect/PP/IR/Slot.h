//===- Slot.h - runtime buffers of stage-function values -------*- C++ -*-===//
//
// A slot names the runtime buffer that an argument or result of a derived
// stage function lives in (`pp.slot = #pp.slot<act stage 0 output 1>`).
// Slots connect the stage functions, the schedule and the runtime; this is
// their one definition, and `#pp.slot` (SlotAttr) their form in the IR.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_SLOT_H
#define PP_DIALECT_PP_IR_SLOT_H

#include "pp/Dialect/PP/IR/PPEnums.h"

#include <cstdint>

namespace mlir::pp {

/// Whether a slot of `kind` names a stage (and a value within it).
bool slotKindHasStage(SlotKind kind);
/// Whether a slot of `kind` has a number (all but the loss and its seed).
bool slotKindHasIndex(SlotKind kind);

/// A runtime buffer: what it holds (SlotKind in PPEnums.td, whose keyword
/// in `#pp.slot<...>` stringifySlotKind gives) and its numbers, which mean
/// per kind:
///   Param, Data, Target, ParamGrad, State, StateUpdate: index = the step's
///   argument number (StateUpdate: a forward's new value of that state);
///   Activation, Gradient: output `index` of stage `stage` (and its gradient);
///   Saved, Stash: value `index` the backward (W) of `stage` keeps;
///   Carry: value `index` of a sequence slice of `stage` that the stage's
///   later slices read (keys and values), kept per micro-batch;
///   CarryGrad: the gradient of a carried value from one later slice
///   (`index` numbers the (value, reading slice) pairs of `stage`);
///   Loss, LossGrad: neither.
struct Slot {
  SlotKind kind = SlotKind::Loss;
  int64_t stage = 0;
  int64_t index = 0;

  static Slot param(int64_t arg) { return {SlotKind::Param, 0, arg}; }
  static Slot data(int64_t arg) { return {SlotKind::Data, 0, arg}; }
  static Slot target(int64_t arg) { return {SlotKind::Target, 0, arg}; }
  static Slot paramGrad(int64_t arg) { return {SlotKind::ParamGrad, 0, arg}; }
  static Slot state(int64_t arg) { return {SlotKind::State, 0, arg}; }
  static Slot stateUpdate(int64_t arg) {
    return {SlotKind::StateUpdate, 0, arg};
  }
  static Slot activation(int64_t stage, int64_t output) {
    return {SlotKind::Activation, stage, output};
  }
  static Slot gradient(int64_t stage, int64_t output) {
    return {SlotKind::Gradient, stage, output};
  }

  static Slot carry(int64_t stage, int64_t value) {
    return {SlotKind::Carry, stage, value};
  }
  static Slot carryGrad(int64_t stage, int64_t edge) {
    return {SlotKind::CarryGrad, stage, edge};
  }
  /// Whether the slot's number names a stage (and a value within it).
  bool hasStage() const { return slotKindHasStage(kind); }

  bool operator==(const Slot &other) const {
    return kind == other.kind && stage == other.stage && index == other.index;
  }
};

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_SLOT_H
