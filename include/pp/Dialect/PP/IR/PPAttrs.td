//===- PPAttrs.td - pp dialect attributes ------------------*- tablegen -*-===//
//
// Phases of a stage computation, kinds of point-to-point transfers, schedule
// costs and the slots of stage-function values.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPATTRS_TD
#define PP_DIALECT_PP_IR_PPATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributes.td"
include "pp/Dialect/PP/IR/PPDialect.td"
include "pp/Dialect/PP/IR/PPEnums.td"
include "pp/Dialect/PP/IR/PPOptionEnums.td"
include "pp/Scheduling/ScheduleEnums.td"

def PP_PhaseAttr : EnumAttr<PP_Dialect, PP_Phase, "phase">;

def PP_TransferKindAttr : EnumAttr<PP_Dialect, PP_TransferKind, "transfer">;

def PP_TransferSemanticsAttr
    : EnumAttr<PP_Dialect, PP_TransferSemantics, "semantics">;

def PP_ZeroGatherAttr : EnumAttr<PP_Dialect, PP_ZeroGather, "zero_gather">;

def PP_CostAttr : AttrDef<PP_Dialect, "Cost"> {
  let mnemonic = "cost";
  let summary = "what a schedule is built for: per-stage times and memory";
  let description = [{
    Per-stage times of the forward (F), input-gradient (B) and
    weight-gradient (W) computations in any unit (a fused backward takes
    B + W), the time of one activation or gradient transfer, the activation
    memory one micro-batch's forward of a stage holds until its backward,
    and the part of it still held after B until W. Arrays have one entry
    per stage; every value is finite and not negative, and prints exactly.
    The same fields as the `cost` block of `pp-schedule-v1`.

    ```mlir
    #pp.cost<forward = [1.0, 1.0], backward_input = [1.0, 1.0],
             backward_weight = [1.0, 1.0], comm = 0.1,
             activation = [1.0, 1.0], stash = [0.5, 0.5]>
    ```

    Where micro-batches differ (samples of different lengths), any of the
    five per-stage fields may also be given per (stage, micro-batch):
    `microbatch_<field> = [[stage 0's per micro-batch], [stage 1's], ...]`,
    one row per stage and one entry per micro-batch in each row; the rows of
    every such table have the schedule's number of micro-batches. A table
    replaces its field's per-stage values for timing and memory; the
    per-stage values stay what tools that read costs per stage use (the
    largest over the micro-batches where pp writes them).

    ```mlir
    #pp.cost<forward = [3.0, 3.0], backward_input = [6.0, 6.0],
             backward_weight = [0.0, 0.0], comm = 0.0,
             activation = [1.0, 1.0], stash = [0.0, 0.0],
             microbatch_forward = [[1.0, 3.0], [1.0, 3.0]],
             microbatch_backward_input = [[2.0, 6.0], [2.0, 6.0]]>
    ```

    Measured costs may add each stage's optimizer step (`optimizer`, one
    entry per stage) and the work each rank does once per step before its
    first action (`step_overhead`): pp-simulate and `auto` time them, so
    that a simulated step is the measured one.

    ```mlir
    #pp.cost<forward = [1.0], backward_input = [1.0], backward_weight = [1.0],
             comm = 0.0, activation = [1.0], stash = [0.0],
             optimizer = [0.25], step_overhead = 0.5>
    ```
  }];
  let parameters = (ins "::mlir::DenseF64ArrayAttr":$forward,
                        "::mlir::DenseF64ArrayAttr":$backward_input,
                        "::mlir::DenseF64ArrayAttr":$backward_weight,
                        "::mlir::FloatAttr":$comm,
                        "::mlir::DenseF64ArrayAttr":$activation,
                        "::mlir::DenseF64ArrayAttr":$stash,
                        OptionalParameter<"::mlir::DenseF64ArrayAttr">:$microbatch_forward,
                        OptionalParameter<"::mlir::DenseF64ArrayAttr">:$microbatch_backward_input,
                        OptionalParameter<"::mlir::DenseF64ArrayAttr">:$microbatch_backward_weight,
                        OptionalParameter<"::mlir::DenseF64ArrayAttr">:$microbatch_activation,
                        OptionalParameter<"::mlir::DenseF64ArrayAttr">:$microbatch_stash,
                        OptionalParameter<"::mlir::DenseF64ArrayAttr">:$optimizer,
                        OptionalParameter<"::mlir::FloatAttr">:$step_overhead);
  let builders = [
    // Costs that are the same for every micro-batch.
    AttrBuilder<(ins "::mlir::DenseF64ArrayAttr":$forward,
                     "::mlir::DenseF64ArrayAttr":$backward_input,
                     "::mlir::DenseF64ArrayAttr":$backward_weight,
                     "::mlir::FloatAttr":$comm,
                     "::mlir::DenseF64ArrayAttr":$activation,
                     "::mlir::DenseF64ArrayAttr":$stash), [{
      return $_get($_ctxt, forward, backward_input, backward_weight, comm,
                   activation, stash, nullptr, nullptr, nullptr, nullptr,
                   nullptr, nullptr, nullptr);
    }]>,
  ];
  // MLIR prints the elements of a DenseF64ArrayAttr with six digits, which
  // loses precision (0.123456789 became 1.234568e-01, 1e-50 became 0, 1e300
  // INF); these arrays print every element exactly, as FloatAttr does. The
  // per-micro-batch tables print as one row per stage.
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Unit costs for `numStages` stages: F = B = W = 1, no transfer time,
    /// one unit of activation per micro-batch, none kept for W.
    static CostAttr getUnit(::mlir::MLIRContext *context, int64_t numStages);
    int64_t getNumStages() const { return getForward().size(); }
    /// The micro-batches the per-micro-batch tables describe; 0 without
    /// tables.
    int64_t getNumMicrobatches() const;
    /// The per-micro-batch tables, null where absent, in the order of the
    /// per-stage fields (forward, backward_input, backward_weight,
    /// activation, stash).
    std::array<::mlir::DenseF64ArrayAttr, 5> getMicrobatchTables() const {
      return {getMicrobatchForward(), getMicrobatchBackwardInput(),
              getMicrobatchBackwardWeight(), getMicrobatchActivation(),
              getMicrobatchStash()};
    }
  }];
}

def PP_SlotAttr : AttrDef<PP_Dialect, "Slot"> {
  let mnemonic = "slot";
  let summary = "the runtime buffer a stage function's argument lives in";
  let description = [{
    Set as `pp.slot` on each argument and result of a derived stage function
    (`pp-derive-backward`), it names the runtime buffer the value lives in,
    so that the schedule's lowering can pass every stage function the
    buffers it reads and writes. The kinds (include/pp/Dialect/PP/IR/Slot.h):

    | slot | holds | per micro-batch |
    | --- | --- | --- |
    | `param i`, `param_grad i` | weight i of the step, its gradient | no, yes |
    | `data i`, `target i` | batch argument i | yes |
    | `act stage s output j` | output j of stage s | yes |
    | `grad stage s output j` | the gradient of that output | yes |
    | `saved stage s value n` | forward value n the backward of s reads | yes |
    | `stash stage s value n` | value n the B of s leaves for its W | yes |
    | `loss`, `loss_grad` | the loss, the backward's seed | yes |

    ```mlir
    func.func @step_s1_forward(
        %a: tensor<4x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
        %w: tensor<8x8xf32> {pp.slot = #pp.slot<param 2>})
        -> (tensor<f32> {pp.slot = #pp.slot<loss>})
    ```
  }];
  let parameters = (ins "::mlir::pp::SlotKind":$kind, "int64_t":$stage,
                        "int64_t":$index);
  let builders = [
    AttrBuilder<(ins "const ::mlir::pp::Slot &":$slot), [{
      return $_get($_ctxt, slot.kind, slot.stage, slot.index);
    }]>,
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    ::mlir::pp::Slot getSlot() const {
      return {getKind(), getStage(), getIndex()};
    }
  }];
}

#endif // PP_DIALECT_PP_IR_PPATTRS_TD
