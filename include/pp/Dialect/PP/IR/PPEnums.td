//===- PPEnums.td - pp enumerations ------------------------*- tablegen -*-===//
//
// The enumerations of the pp dialect's own attributes, with their keywords:
// -gen-enum-decls/-gen-enum-defs write each enum class and its
// stringify/symbolize functions. Those of pass options are in
// PPOptionEnums.td, apart from the dialect's reference; those of schedules
// (phases, transfer kinds and semantics) in the scheduling library's
// ScheduleEnums.td.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPENUMS_TD
#define PP_DIALECT_PP_IR_PPENUMS_TD

include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Slots of stage-function values (#pp.slot, Slot.h)
//===----------------------------------------------------------------------===//

// What a slot holds; the string is its keyword in `#pp.slot<...>`.
def PP_SlotKind : I32Enum<"SlotKind", "what a runtime buffer holds", [
    I32EnumCase<"Param", 0, "param">,                // <param i>
    I32EnumCase<"Data", 1, "data">,                  // <data i>
    I32EnumCase<"Target", 2, "target">,              // <target i>
    I32EnumCase<"Activation", 3, "act">,             // <act stage s output j>
    I32EnumCase<"Gradient", 4, "grad">,              // <grad stage s output j>
    I32EnumCase<"Saved", 5, "saved">,                // <saved stage s value n>
    I32EnumCase<"Stash", 6, "stash">,                // <stash stage s value n>
    I32EnumCase<"ParamGrad", 7, "param_grad">,       // <param_grad i>
    I32EnumCase<"Loss", 8, "loss">,                  // <loss>
    I32EnumCase<"LossGrad", 9, "loss_grad">,         // <loss_grad>
    I32EnumCase<"State", 10, "state">,               // <state i>
    I32EnumCase<"StateUpdate", 11, "state_update">,  // <state_update i>
    I32EnumCase<"Carry", 12, "carry">,               // <carry stage s value n>
    I32EnumCase<"CarryGrad", 13, "carry_grad">       // <carry_grad stage s value e>
  ]> {
  let cppNamespace = "::mlir::pp";
}

#endif // PP_DIALECT_PP_IR_PPENUMS_TD
