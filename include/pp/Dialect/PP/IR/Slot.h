//===- Slot.h - names of the runtime buffers stage functions use -*- C++
//-*-===//
//
// A slot names the runtime buffer that an argument or result of a derived
// stage function lives in (`pp.slot = "act:0:1"`). Slots connect the stage
// functions, the schedule and the runtime; this is their one definition.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_SLOT_H
#define PP_DIALECT_PP_IR_SLOT_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::pp {

/// What a slot holds. `stage` and `index` mean, per kind:
///   Param, Data, Target, ParamGrad: index = the step's argument number;
///   Activation, Gradient: output `index` of stage `stage` (and its gradient);
///   Saved, Stash: value `index` the backward (W) of `stage` keeps;
///   Loss, LossGrad: neither.
enum class SlotKind {
  Param,      // "param:i"       a weight
  Data,       // "data:i"        batch input
  Target,     // "target:i"      batch target
  Activation, // "act:s:j"       stage output
  Gradient,   // "grad:s:j"      gradient of a stage output
  Saved,      // "saved:s:n"     forward value the backward reads
  Stash,      // "stash:s:n"     B value W reads
  ParamGrad,  // "param_grad:i"  one micro-batch's weight gradient
  Loss,       // "loss"          the last stage's loss
  LossGrad,   // "loss_grad"     the backward's seed, 1
};

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
  bool hasStage() const;
  /// The textual form stored in `pp.slot`.
  std::string str() const;
  /// Parses the textual form; nullopt if malformed.
  static std::optional<Slot> parse(llvm::StringRef text);

  bool operator==(const Slot &other) const {
    return kind == other.kind && stage == other.stage && index == other.index;
  }
};

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_SLOT_H
