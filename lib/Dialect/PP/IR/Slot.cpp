//===- Slot.cpp - names of the runtime buffers stage functions use --------===//
//
// Printing and parsing of `pp.slot` names.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/Slot.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir::pp;

static llvm::StringRef prefixOf(SlotKind kind) {
  switch (kind) {
  case SlotKind::Param:
    return "param";
  case SlotKind::Data:
    return "data";
  case SlotKind::Target:
    return "target";
  case SlotKind::Activation:
    return "act";
  case SlotKind::Gradient:
    return "grad";
  case SlotKind::Saved:
    return "saved";
  case SlotKind::Stash:
    return "stash";
  case SlotKind::ParamGrad:
    return "param_grad";
  case SlotKind::Loss:
    return "loss";
  case SlotKind::LossGrad:
    return "loss_grad";
  }
  return "";
}

bool Slot::hasStage() const {
  return kind == SlotKind::Activation || kind == SlotKind::Gradient ||
         kind == SlotKind::Saved || kind == SlotKind::Stash;
}

std::string Slot::str() const {
  std::string text = prefixOf(kind).str();
  if (kind == SlotKind::Loss || kind == SlotKind::LossGrad)
    return text;
  if (hasStage())
    text += ":" + std::to_string(stage);
  return text + ":" + std::to_string(index);
}

std::optional<Slot> Slot::parse(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ':');
  std::optional<SlotKind> kind =
      llvm::StringSwitch<std::optional<SlotKind>>(parts.front())
          .Case("param", SlotKind::Param)
          .Case("data", SlotKind::Data)
          .Case("target", SlotKind::Target)
          .Case("act", SlotKind::Activation)
          .Case("grad", SlotKind::Gradient)
          .Case("saved", SlotKind::Saved)
          .Case("stash", SlotKind::Stash)
          .Case("param_grad", SlotKind::ParamGrad)
          .Case("loss", SlotKind::Loss)
          .Case("loss_grad", SlotKind::LossGrad)
          .Default(std::nullopt);
  if (!kind)
    return std::nullopt;
  Slot slot{*kind};
  llvm::SmallVector<int64_t, 2> numbers;
  for (llvm::StringRef part : llvm::drop_begin(parts)) {
    int64_t n;
    if (part.getAsInteger(10, n) || n < 0)
      return std::nullopt;
    numbers.push_back(n);
  }
  size_t expected = slot.hasStage() ? 2
                    : *kind == SlotKind::Loss || *kind == SlotKind::LossGrad
                        ? 0
                        : 1;
  if (numbers.size() != expected)
    return std::nullopt;
  if (expected == 2)
    slot.stage = numbers[0];
  if (expected > 0)
    slot.index = numbers.back();
  return slot;
}
