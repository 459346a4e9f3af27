//===- PPOptionEnums.td - values of pp's pass options ------*- tablegen -*-===//
//
// The enumerated options of pp's passes and pipelines, with the strings
// they take on the command line: -gen-enum-decls/-gen-enum-defs write each
// enum class and its stringify/symbolize functions. The recompute policy,
// which the partition planner takes, is in the scheduling library's
// ScheduleOptionEnums.td.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPOPTIONENUMS_TD
#define PP_DIALECT_PP_IR_PPOPTIONENUMS_TD

include "mlir/IR/EnumAttr.td"

def PP_GemmChoice : I32Enum<"GemmChoice", "how contractions are lowered", [
    // By MLIR's code generation.
    I32EnumCase<"Generated", 0, "generated">,
    // By the runtime's GEMM entry.
    I32EnumCase<"Library", 1, "library">,
    // Per shape (pp-select-gemm).
    I32EnumCase<"Auto", 2, "auto">
  ]> {
  let cppNamespace = "::mlir::pp";
}

def PP_GemmPrecision : I32Enum<"GemmPrecision",
    "the element type library GEMMs read their inputs in", [
    I32EnumCase<"FP32", 0, "fp32">,
    // Rounded from the fp32 values, with fp32 products and accumulation.
    I32EnumCase<"BF16", 1, "bf16">
  ]> {
  let cppNamespace = "::mlir::pp";
}

def PP_ZeroGather : I32Enum<"ZeroGather",
    "the unit ZeRO-3 gathers the sharded weights in", [
    // A stage's weights, once per step before its first compute.
    I32EnumCase<"Stage", 0, "stage">,
    // Each weight around each stage function's reads of it.
    I32EnumCase<"Param", 1, "param">
  ]> {
  let cppNamespace = "::mlir::pp";
}

#endif // PP_DIALECT_PP_IR_PPOPTIONENUMS_TD
