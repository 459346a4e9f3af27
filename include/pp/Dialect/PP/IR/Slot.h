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

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::pp {

/// What a slot holds. `stage` and `index` mean, per kind:
///   Param, Data, Target, ParamGrad: index = the step's argument number;
///   Activation, Gradient: output `index` of stage `stage` (and its gradient);
///   Saved, Stash: value `index` the backward (W) of `stage` keeps;
///   Loss, LossGrad: neither.
enum class SlotKind {
  Param,      // <param i>               a weight
  Data,       // <data i>                batch input
  Target,     // <target i>              batch target
  Activation, // <act stage s output j>  stage output
  Gradient,   // <grad stage s output j> gradient of a stage output
  Saved,      // <saved stage s value n> forward value the backward reads
  Stash,      // <stash stage s value n> B value W reads
  ParamGrad,  // <param_grad i>          one micro-batch's weight gradient
  Loss,       // <loss>                  the last stage's loss
  LossGrad,   // <loss_grad>             the backward's seed, 1
};

/// The keyword of `kind` in `#pp.slot<...>`.
llvm::StringRef stringifySlotKind(SlotKind kind);
/// The kind a keyword names, if any.
std::optional<SlotKind> symbolizeSlotKind(llvm::StringRef keyword);
/// Whether a slot of `kind` names a stage (and a value within it).
bool slotKindHasStage(SlotKind kind);
/// Whether a slot of `kind` has a number (all but the loss and its seed).
bool slotKindHasIndex(SlotKind kind);

struct Slot {
  SlotKind kind = SlotKind::Loss;
  int64_t stage = 0;
  int64_t index = 0;

  static Slot param(int64_t arg) { return {SlotKind::Param, 0, arg}; }
  static Slot data(int64_t arg) { return {SlotKind::Data, 0, arg}; }
  static Slot target(int64_t arg) { return {SlotKind::Target, 0, arg}; }
  static Slot paramGrad(int64_t arg) { return {SlotKind::ParamGrad, 0, arg}; }
  static Slot activation(int64_t stage, int64_t output) {
    return {SlotKind::Activation, stage, output};
  }
  static Slot gradient(int64_t stage, int64_t output) {
    return {SlotKind::Gradient, stage, output};
  }

  /// Whether the slot's number names a stage (and a value within it).
  bool hasStage() const { return slotKindHasStage(kind); }

  bool operator==(const Slot &other) const {
    return kind == other.kind && stage == other.stage && index == other.index;
  }
};

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_SLOT_H
