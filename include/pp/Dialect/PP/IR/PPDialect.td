//===- PPDialect.td - The pp pipeline-parallelism dialect --*- tablegen -*-===//
//
// The dialect that holds pipeline stages, schedules and transfers.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPDIALECT_TD
#define PP_DIALECT_PP_IR_PPDIALECT_TD

include "mlir/IR/OpBase.td"

def PP_Dialect : Dialect {
  let name = "pp";
  let cppNamespace = "::mlir::pp";
  let summary = "Pipeline-parallel training: stages, schedules, transfers";
  let description = [{
    The `pp` dialect represents a model cut into pipeline stages and the
    schedule that streams micro-batches through them. Stages are region ops
    isolated from above (`pp.stage`); a schedule (`pp.schedule`) holds one
    region per rank with the ordered actions that rank executes: compute
    (`pp.compute` with a phase: forward, backward_input, backward_weight or
    the fused backward), point-to-point transfers (`pp.send`, `pp.recv`) and
    collectives (`pp.all_reduce`). Micro-batch and phase are attributes, not
    types.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The discardable `pp.*` attributes (PPDialect.h) on ops, function
  // arguments and results: known names, where they belong, valid values.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

class PP_Op<string mnemonic, list<Trait> traits = []>
    : Op<PP_Dialect, mnemonic, traits>;

#endif // PP_DIALECT_PP_IR_PPDIALECT_TD
