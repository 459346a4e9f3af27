// RUN: pp-opt %s -split-input-file -verify-diagnostics --convert-pp-to-runtime

// expected-error @+1 {{convert-pp-to-runtime needs exactly one pp.schedule, or one per step plan, found 0}}
module {
}

// -----

// expected-error @+1 {{stage functions must be bufferized with results as out-parameters before convert-pp-to-runtime}}
func.func @m_s0_forward(%x: tensor<4xf32> {pp.slot = #pp.slot<data 0>}) -> tensor<4xf32>
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return %x : tensor<4xf32>
}
pp.schedule @s "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
  }
}

// -----

// expected-error @+1 {{argument #0 needs a valid 'pp.slot' and a static, identity-layout memref of f32, f16, bf16, i1, i32 or i64}}
func.func @m_s0_forward(%x: memref<4xf32>)
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @s "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
  }
}

// -----

// Rank 6 (PPRT_MAX_DIMS) is the most a runtime buffer has.
// expected-error @+1 {{argument #1 has rank 7 ('memref<1x2x1x2x1x2x1xf32>'); runtime buffers have rank at most 6}}
func.func @m_s0_forward(%x: memref<1x2x1x2x1x2xf32> {pp.slot = #pp.slot<data 0>},
                        %act: memref<1x2x1x2x1x2x1xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @s "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
  }
}

// -----

func.func @m_s0_forward(%x: memref<4xf32> {pp.slot = #pp.slot<data 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @s "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{has no stage function for stage 0 phase backward}}
    pp.compute backward stage 0 mb 0
  }
}

// -----

// expected-error @+1 {{argument #0 needs a valid 'pp.slot' and a static, identity-layout memref of f32, f16, bf16, i1, i32 or i64}}
func.func @m_s0_forward(%x: memref<4xf64> {pp.slot = #pp.slot<data 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @s "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
  }
}

// -----

func.func @m_s0_forward(%x: memref<4xf32> {pp.slot = #pp.slot<data 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
// expected-error @+1 {{argument #0 has type 'memref<2xf32>' but slot #pp.slot<data 0> is 'memref<4xf32>' elsewhere}}
func.func @m_s0_backward(%x: memref<2xf32> {pp.slot = #pp.slot<data 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @s "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
  }
}

// -----

func.func @m_s0_forward(%x: memref<4xf32> {pp.slot = #pp.slot<data 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
// expected-error @+1 {{'pp.schedule' op has no optimizer step for stage 0; run pp-insert-transfers to add them}}
pp.schedule @s "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
  }
}

// -----

// Sequence-sliced schedules need stage functions cut along the sequence.
module {
  // expected-error @+1 {{'pp.schedule' op runs 2 sequence slices per micro-batch, but its stage functions compute whole micro-batches; cut the step with pp-split-sequence before pp-partition-stages and pp-split-slice-stages after it}}
  pp.schedule @sliced "seq1f1b" for @f microbatches 2 stage_rank [0]
      attributes {slices = 2 : i64} {
    pp.rank 0 {
      pp.compute forward stage 0 mb 0
      pp.compute forward stage 0 mb 1
      pp.compute backward stage 0 mb 1
      pp.compute backward stage 0 mb 0
    }
  }
}

// -----

// Stage functions cut into 2 slices under a schedule of 3.
module {
  func.func @f_s0_slice1_forward(%x: memref<2xf32> {pp.slot = #pp.slot<data 0>})
      attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64, pp.slice = 1 : i64} {
    return
  }
  // expected-error @+1 {{'pp.schedule' op runs 3 sequence slices per micro-batch, but its stage functions compute 2}}
  pp.schedule @sliced "seq1f1b" for @f microbatches 3 stage_rank [0]
      attributes {slices = 3 : i64} {
    pp.rank 0 {
      pp.compute forward stage 0 mb 0
      pp.compute forward stage 0 mb 1
      pp.compute forward stage 0 mb 2
      pp.compute backward stage 0 mb 2
      pp.compute backward stage 0 mb 1
      pp.compute backward stage 0 mb 0
    }
  }
}
