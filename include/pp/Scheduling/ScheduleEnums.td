//===- ScheduleEnums.td - enumerations of pp schedules -----*- tablegen -*-===//
//
// The enumerations the scheduling library works in, with their keywords:
// -gen-enum-decls/-gen-enum-defs write each enum class and its
// stringify/symbolize functions (defined in PPScheduling). The pp dialect's
// attributes (PPAttrs.td) are built on them, so a schedule in IR and on
// plain data speak the same words.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SCHEDULEENUMS_TD
#define PP_SCHEDULING_SCHEDULEENUMS_TD

include "mlir/IR/EnumAttr.td"

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

#endif // PP_SCHEDULING_SCHEDULEENUMS_TD
