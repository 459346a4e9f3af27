// A shape variant whose stage 0 reads another weight than the model's.
func.func @m_s0_forward(%x: memref<2x4xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<4x4xf32> {pp.slot = #pp.slot<param 3>},
                        %act: memref<2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @m_schedule "gpipe" for @m microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}
