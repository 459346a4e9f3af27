// RUN: pp-opt %s -split-input-file --pp-verify-schedule -verify-diagnostics

// Groups of 2 need stage functions partitioned for 2.
// expected-error @+1 {{runs as pp.tensor_parallel = 2, but its stage functions are not partitioned over shard.grid @pp_tp(shape = 2) (pp-shard-stages does that)}}
pp.schedule @unpartitioned "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {pp.tensor_parallel = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// -----

// Stage functions partitioned for 4 under a schedule of single processes.
// expected-note @+1 {{the grid}}
shard.grid @pp_tp(shape = 4)
// expected-error @+1 {{runs as pp.tensor_parallel = 1, but its stage functions are partitioned over grid @pp_tp}}
pp.schedule @mismatch "gpipe" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// -----

// The group size is a positive count.
// expected-error @+1 {{'pp.schedule' op has 'pp.tensor_parallel' = 0 : i64, which is not a tensor-parallel group size (an i64 in [1, 65536))}}
pp.schedule @zero "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {pp.tensor_parallel = 0 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}
