// RUN: pp-opt %s -split-input-file -verify-diagnostics --convert-pp-to-runtime

// A micro-batch's buffers cross stages: every stage must run it at one shape.
func.func @m_s0_forward(%x: memref<2x8xf32> {pp.slot = #pp.slot<data 0>},
                        %act: memref<2x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<2x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_forward_v1(%act: memref<2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                           %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64, pp.variant = 1 : i64} {
  return
}
pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    // expected-note @+1 {{that action}}
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    // expected-error @+1 {{'pp.compute' op runs micro-batch 0 as shape variant 1, but stage 0 runs it as variant 0}}
    pp.compute forward stage 1 mb 0 @m_s1_forward_v1
    pp.optimizer_step stage 1
  }
}

// -----

// expected-error @+1 {{has 'pp.variant' = 0 : i64, which is not a variant (an i64 in [1, 65536))}}
func.func @m_s0_forward() attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64, pp.variant = 0 : i64} {
  return
}
