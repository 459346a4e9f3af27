// RUN: pp-opt %s -split-input-file --pp-verify-schedule -verify-diagnostics

// ZeRO-1 reduce-scatters where plain data parallelism all-reduces.
pp.schedule @all_reduce_under_zero "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{all_reduce of stage 0 in a schedule with zero = 1 for stage 0, which sums gradients with pp.reduce_scatter}}
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
    pp.all_gather stage 0
  }
}

// -----

pp.schedule @scatter_without_zero "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{reduce_scatter of stage 0 in a schedule with zero = 0 for stage 0, which sums gradients with pp.all_reduce}}
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    // expected-error @+1 {{all_gather of stage 0 in a schedule without zero = 1 or 3 for its stage: only ZeRO-1 and -3 shard the weights}}
    pp.all_gather stage 0
  }
}

// -----

// The reduce-scatter sees every micro-batch's weight gradient.
pp.schedule @early "1f1b" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward_input stage 0 mb 0
    // expected-error @+1 {{reduce_scatter of stage 0 runs before the backward_weight of stage 0 micro-batch 0 whose gradient it reduces}}
    pp.reduce_scatter stage 0
    // expected-note @+1 {{backward_weight of stage 0 micro-batch 0 here}}
    pp.compute backward_weight stage 0 mb 0
    pp.optimizer_step stage 0
    pp.all_gather stage 0
  }
}

// -----

// The optimizer step updates the block the reduce-scatter summed.
pp.schedule @after_step "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    // expected-note @+1 {{optimizer_step of stage 0 here}}
    pp.optimizer_step stage 0
    // expected-error @+1 {{reduce_scatter of stage 0 comes after the optimizer_step of stage 0 that applies the gradients it reduces}}
    pp.reduce_scatter stage 0
    pp.all_gather stage 0
  }
}

// -----

// One gradient collective per stage.
pp.schedule @twice "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    // expected-note @+1 {{first occurrence here}}
    pp.reduce_scatter stage 0
    // expected-error @+1 {{duplicate reduce_scatter of stage 0}}
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    pp.all_gather stage 0
  }
}

// -----

// The all-gather spreads the blocks the step updated.
pp.schedule @gather_first "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.reduce_scatter stage 0
    // expected-error @+1 {{all_gather of stage 0 must follow the optimizer_step of stage 0 on its rank: it gathers the updated blocks}}
    pp.all_gather stage 0
    pp.optimizer_step stage 0
  }
}

// -----

pp.schedule @gather_twice "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    // expected-note @+1 {{first occurrence here}}
    pp.all_gather stage 0
    // expected-error @+1 {{duplicate all_gather of stage 0}}
    pp.all_gather stage 0
  }
}

// -----

// Every stage of a replicated ZeRO-1 schedule needs both collectives.
pp.schedule @missing "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64} {
  // expected-error @+2 {{missing reduce_scatter of stage 0: the schedule runs as 2 data-parallel replicas}}
  // expected-error @+1 {{missing all_gather of stage 0: the schedule runs as 2 data-parallel replicas with zero = 1}}
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// -----

// ZeRO-2 is not offered.
// expected-error @+1 {{'pp.schedule' op has zero = 2 for stage 0; only 0 (plain data parallelism), 1 (ZeRO-1, optimizer state sharded over the replicas) and 3 (ZeRO-3, weights sharded too) are supported}}
pp.schedule @zero2 "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// -----

// ZeRO-3 gathers the weights its stage's computes read: before all of them.
pp.schedule @zero3_late_gather "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 3 : i64} {
  pp.rank 0 {
    // expected-note @+1 {{forward of stage 0 micro-batch 0 here}}
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{all_gather of stage 0 must come before the forward of stage 0 micro-batch 0 on its rank: under zero = 3 it gathers the weights the stage's computes read}}
    pp.all_gather stage 0
    pp.compute backward stage 0 mb 0
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
  }
}

// -----

// ZeRO-3 with several replicas gathers every stage's weights.
pp.schedule @zero3_no_gather "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 3 : i64} {
  // expected-error @+1 {{missing all_gather of stage 0: the schedule runs as 2 data-parallel replicas with zero = 3}}
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
  }
}

// -----

// Gathering per param gathers the weights only ZeRO-3 shards.
// expected-error @+1 {{'pp.schedule' op gathers the weights of stage 0 per param (zero_gather = param) but it has zero = 1; only ZeRO-3 (zero = 3) shards the weights it gathers}}
pp.schedule @param_gather_zero1 "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64,
                zero_gather = #pp<zero_gather param>} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    pp.all_gather stage 0
  }
}

// -----

// Per stage, `zero` has one level for each stage.
// expected-error @+1 {{'pp.schedule' op zero has 3 levels, expected one per stage (2)}}
pp.schedule @zero_levels_count "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64, zero = array<i64: 0, 3, 1>} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// expected-error @+1 {{'pp.schedule' op zero_gather has 1 units, expected one per stage (2)}}
pp.schedule @zero_units_count "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64, zero = 3 : i64,
                zero_gather = [#pp<zero_gather param>]} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// Only a ZeRO-3 stage gathers per param.
// expected-error @+1 {{'pp.schedule' op gathers the weights of stage 0 per param (zero_gather = param) but it has zero = 0; only ZeRO-3 (zero = 3) shards the weights it gathers}}
pp.schedule @param_unit_zero0 "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64, zero = array<i64: 0, 3>,
                zero_gather = [#pp<zero_gather param>, #pp<zero_gather param>]} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// One unit for every stage applies to each stage's own level.
// expected-error @+1 {{'pp.schedule' op gathers the weights of stage 0 per param (zero_gather = param) but it has zero = 1; only ZeRO-3 (zero = 3) shards the weights it gathers}}
pp.schedule @param_all_zero1 "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64, zero = array<i64: 1, 3>,
                zero_gather = #pp<zero_gather param>} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// expected-error @+1 {{'pp.schedule' op has zero = 2 for stage 1; only 0 (plain data parallelism), 1 (ZeRO-1, optimizer state sharded over the replicas) and 3 (ZeRO-3, weights sharded too) are supported}}
pp.schedule @zero2_stage1 "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64, zero = array<i64: 0, 2>} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// Each stage's collectives follow its own level: stage 0 (ZeRO-0)
// all-reduces and gathers nothing, stage 1 (ZeRO-3) reduce-scatters and
// gathers before its computes.
pp.schedule @mixed_collectives "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64, zero = array<i64: 0, 3>} {
  pp.rank 0 {
    // expected-error @+1 {{all_gather of stage 0 in a schedule without zero = 1 or 3 for its stage: only ZeRO-1 and -3 shard the weights}}
    pp.all_gather stage 0
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{reduce_scatter of stage 0 in a schedule with zero = 0 for stage 0, which sums gradients with pp.all_reduce}}
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
  }
  // expected-error @+1 {{missing all_gather of stage 1: the schedule runs as 2 data-parallel replicas with zero = 3}}
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    // expected-error @+1 {{all_reduce of stage 1 in a schedule with zero = 3 for stage 1, which sums gradients with pp.reduce_scatter}}
    pp.all_reduce stage 1
    pp.optimizer_step stage 1
  }
}
