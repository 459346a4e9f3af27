// The stage functions of attach-variants.mlir's model at a shorter shape
// (2 rows of 4 instead of 2 of 8), scheduled alike.
func.func @m_s0_forward(%x: memref<2x4xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<4x4xf32> {pp.slot = #pp.slot<param 1>},
                        %act: memref<2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%g: memref<2x4xf32> {pp.slot = #pp.slot<grad stage 0 output 0>},
                         %dw: memref<4x4xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %y: memref<2x4xf32> {pp.slot = #pp.slot<target 2>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %g: memref<2x4xf32> {pp.slot = #pp.slot<grad stage 0 output 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 1 : i64} {
  return
}
pp.schedule @m_schedule "gpipe" for @m microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}
