// RUN: not pp-opt %s --pp-attach-variants="variants=%S/../Inputs/variant-short.mlir microbatch-variants=0,1,1" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not pp-opt %s --pp-attach-variants="variants=%S/../Inputs/variant-short.mlir microbatch-variants=0,2" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not pp-opt %s --pp-attach-variants="variants=%S/../Inputs/variant-other-cut.mlir" 2>&1 | FileCheck %s --check-prefix=CUT
// RUN: not pp-opt %s --pp-attach-variants="variants=%S/../Inputs/no-such-variant.mlir" 2>&1 | FileCheck %s --check-prefix=FILE

// COUNT: error: 'pp.schedule' op has 2 micro-batches, but 3 shape variants were given
// RANGE: error: pp-attach-variants: shape variant 2 of a micro-batch is not in [0, 1]
// CUT: variant-other-cut.mlir:{{.*}} error: 'pp.schedule' op of shape variant 1 places other weights in stage 0 than the program does: its model must be cut into the same stages (mark them with pp.boundary)
// FILE: error: pp-attach-variants: cannot open input file '{{.*}}no-such-variant.mlir'

func.func @m_s0_forward(%x: memref<2x8xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<4x4xf32> {pp.slot = #pp.slot<param 1>},
                        %act: memref<2x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<2x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
pp.schedule @m_schedule "gpipe" for @m microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.compute forward stage 0 mb 1 @m_s0_forward
  }
  pp.rank 1 {
    pp.compute forward stage 1 mb 0 @m_s1_forward
    pp.compute forward stage 1 mb 1 @m_s1_forward
  }
}
