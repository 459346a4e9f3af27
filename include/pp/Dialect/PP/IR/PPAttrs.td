//===- PPAttrs.td - pp dialect attributes ------------------*- tablegen -*-===//
//
// Phases of a stage computation and kinds of point-to-point transfers.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPATTRS_TD
#define PP_DIALECT_PP_IR_PPATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "pp/Dialect/PP/IR/PPDialect.td"

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

def PP_PhaseAttr : EnumAttr<PP_Dialect, PP_Phase, "phase">;

def PP_TransferActivation : I32EnumAttrCase<"activation", 0>;
def PP_TransferGradient : I32EnumAttrCase<"gradient", 1>;

def PP_TransferKind : I32EnumAttr<"TransferKind",
    "what a point-to-point transfer carries",
    [PP_TransferActivation, PP_TransferGradient]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::pp";
}

def PP_TransferKindAttr : EnumAttr<PP_Dialect, PP_TransferKind, "transfer">;

#endif // PP_DIALECT_PP_IR_PPATTRS_TD
