//===- PPEnums.td - pp enumerations ------------------------*- tablegen -*-===//
//
// The enumerations of the pp dialect's attributes, with their keywords:
// -gen-enum-decls/-gen-enum-defs write each enum class and its
// stringify/symbolize functions. Those of pass options are in
// PPOptionEnums.td, apart from the dialect's reference.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPENUMS_TD
#define PP_DIALECT_PP_IR_PPENUMS_TD

include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Schedule actions (attributes of the dialect, PPAttrs.td)
//===----------------------------------------------------------------------===//

def PP_PhaseForward : I32EnumAttrCase<"forward", 0>;
def PP_PhaseBackwardInput : I32EnumAttrCase<"backward_input", 1>;
def PP_PhaseBackwardWeight : I32EnumAttrCase<"backward_weight", 2>;
def PP_PhaseBackward : I32EnumAttrCase<"backward", 3>;

def PP_Phase : I32EnumAttr<"Phase",
    "phase of a stage computation (PyTorch F, I, W, B)",
    [PP_PhaseForward, PP_PhaseBackwardInput, PP_PhaseBackwardWeight,
     PP_PhaseBackward]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::pp";
}

def PP_TransferActivation : I32EnumAttrCase<"activation", 0>;
def PP_TransferGradient : I32EnumAttrCase<"gradient", 1>;

def PP_TransferKind : I32EnumAttr<"TransferKind",
    "what a point-to-point transfer carries",
    [PP_TransferActivation, PP_TransferGradient]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::pp";
}

// How point-to-point transfers synchronise: what a schedule's program runs
// with (`semantics` of a pp.schedule) and what pp-schedule, pp-insert-transfers,
// pp-verify-schedule and pp-simulate time and order it by.
def PP_TransferSemantics : I32EnumAttr<"TransferSemantics",
    "how point-to-point transfers synchronise", [
    // A send never blocks; a receive waits for its send (the
    // `pp-schedule-v1` contract, MPI's buffered sends).
    I32EnumAttrCase<"async", 0>,
    // A send also waits until its receive is reached (NCCL send/recv).
    I32EnumAttrCase<"rendezvous", 1>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::pp";
}

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
