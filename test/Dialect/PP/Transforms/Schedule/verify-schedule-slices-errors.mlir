// RUN: pp-opt --pp-verify-schedule -split-input-file -verify-diagnostics %s

// Sequence slices (`slices = 2`: mb 2i + j is slice j of micro-batch i). The
// forward of slice 1 reads the keys and values slice 0's forward made.
pp.schedule @forward_order "seq1f1b" for @f microbatches 2 stage_rank [0]
    attributes {slices = 2 : i64} {
  pp.rank 0 {
    // expected-error @+1 {{'pp.compute' op forward of stage 0 mb 1 (micro-batch 0 slice 1) runs before the forward of stage 0 mb 0 (micro-batch 0 slice 0), whose keys and values its attention reads}}
    pp.compute forward stage 0 mb 1
    // expected-note @+1 {{forward of stage 0 mb 0 (micro-batch 0 slice 0) here}}
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 1
    pp.compute backward stage 0 mb 0
  }
}

// -----

// The backward of slice 0 needs the key and value gradients slice 1's
// backward yields.
pp.schedule @backward_order "seq1f1b" for @f microbatches 4 stage_rank [0]
    attributes {slices = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 1
    pp.compute backward stage 0 mb 0
    pp.compute forward stage 0 mb 2
    pp.compute forward stage 0 mb 3
    // expected-error @+1 {{'pp.compute' op backward of stage 0 mb 2 (micro-batch 1 slice 0) runs before the backward of stage 0 mb 3 (micro-batch 1 slice 1), which yields its keys' and values' gradients}}
    pp.compute backward stage 0 mb 2
    // expected-note @+1 {{backward of stage 0 mb 3 (micro-batch 1 slice 1) here}}
    pp.compute backward stage 0 mb 3
  }
}

// -----

// With split backwards, the input gradients (B) carry the order; W is free.
pp.schedule @split_order "seq1f1b" for @f microbatches 3 stage_rank [0]
    attributes {slices = 3 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute forward stage 0 mb 2
    pp.compute backward_input stage 0 mb 2
    // expected-error @+1 {{'pp.compute' op backward_input of stage 0 mb 0 (micro-batch 0 slice 0) runs before the backward_input of stage 0 mb 1 (micro-batch 0 slice 1), which yields its keys' and values' gradients}}
    pp.compute backward_input stage 0 mb 0
    // expected-note @+1 {{backward_input of stage 0 mb 1 (micro-batch 0 slice 1) here}}
    pp.compute backward_input stage 0 mb 1
    pp.compute backward_weight stage 0 mb 0
    pp.compute backward_weight stage 0 mb 2
    pp.compute backward_weight stage 0 mb 1
  }
}

// -----

// `microbatches` counts slices: whole micro-batches of `slices` each.
// expected-error @+1 {{'pp.schedule' op counts 3 slices in 'microbatches', not a multiple of its 2 slices per micro-batch}}
pp.schedule @partial "seq1f1b" for @f microbatches 3 stage_rank [0]
    attributes {slices = 2 : i64} {
  pp.rank 0 {
  }
}
