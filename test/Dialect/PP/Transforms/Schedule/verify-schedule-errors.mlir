// RUN: pp-opt --pp-verify-schedule -split-input-file -verify-diagnostics %s

// a. A computation on a rank that does not own its stage.
pp.schedule @misplaced_compute "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{'pp.compute' op forward of stage 1 micro-batch 0 is on rank 0, but stage 1 is placed on rank 1}}
    pp.compute forward stage 1 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// a. A transfer executed on a rank that does not own its (local) stage.
pp.schedule @misplaced_send "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{gradient send of stage 1 micro-batch 0 is on rank 0, but stage 1 is placed on rank 1}}
    pp.send gradient stage 1 mb 0 to 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
  }
}

// -----

// b. Missing actions are reported at the rank that should run them.
pp.schedule @missing "gpipe" for @f microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
  }
  // expected-error @+2 {{missing backward of stage 1 micro-batch 1}}
  // expected-error @+1 {{missing forward of stage 1 micro-batch 1}}
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.recv activation stage 1 mb 1 from 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.send gradient stage 1 mb 1 to 0
  }
}

// -----

// b. Half of a split backward.
pp.schedule @missing_weight "zb" for @f microbatches 1 stage_rank [0] {
  // expected-error @+1 {{missing backward_weight of stage 0 micro-batch 0}}
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward_input stage 0 mb 0
  }
}

// -----

// b. Duplicates are reported at the second occurrence.
pp.schedule @duplicate "gpipe" for @f microbatches 3 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    // expected-note @+1 {{first occurrence here}}
    pp.compute forward stage 0 mb 2
    // expected-error @+1 {{duplicate forward of stage 0 micro-batch 2}}
    pp.compute forward stage 0 mb 2
    pp.compute backward stage 0 mb 0
    pp.compute backward stage 0 mb 1
    pp.compute backward stage 0 mb 2
  }
}

// -----

// b. A micro-batch uses either the fused or the split backward, not both.
pp.schedule @mixed "zb" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-note @+1 {{backward_input of stage 0 micro-batch 0 here}}
    pp.compute backward_input stage 0 mb 0
    // expected-error @+1 {{backward of stage 0 micro-batch 0 mixes the fused and the split backward of the same micro-batch}}
    pp.compute backward stage 0 mb 0
    pp.compute backward_weight stage 0 mb 0
  }
}

// -----

// c. Order between stages on the same rank (V shape: stages 1 and 2 on
// rank 1).
pp.schedule @same_rank_order "zbv" for @f microbatches 1 stage_rank [0, 1, 1, 0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv activation stage 3 mb 0 from 1
    pp.compute forward stage 3 mb 0
    pp.compute backward stage 3 mb 0
    pp.send gradient stage 3 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    // expected-error @+1 {{forward of stage 2 micro-batch 0 runs before the forward of stage 1 micro-batch 0 it depends on}}
    pp.compute forward stage 2 mb 0
    // expected-note @+1 {{forward of stage 1 micro-batch 0 here}}
    pp.compute forward stage 1 mb 0
    pp.send activation stage 2 mb 0 to 0
    pp.recv gradient stage 2 mb 0 from 0
    pp.compute backward stage 2 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// c. Order of one stage's phases on its rank.
pp.schedule @weight_before_input "zb" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{backward_weight of stage 0 micro-batch 0 runs before the backward_input of stage 0 micro-batch 0 it depends on}}
    pp.compute backward_weight stage 0 mb 0
    // expected-note @+1 {{backward_input of stage 0 micro-batch 0 here}}
    pp.compute backward_input stage 0 mb 0
  }
}

// -----

// c. A dependency across ranks without any transfer.
pp.schedule @missing_recv "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    // expected-error @+1 {{'pp.compute' op forward of stage 1 micro-batch 0 needs its input from rank 0, but no 'pp.recv activation' precedes it}}
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// c. The receive exists but comes too late.
pp.schedule @late_recv "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    // expected-error @+2 {{backward of stage 0 micro-batch 0 needs its output gradient from rank 1, but no 'pp.recv gradient' precedes it}}
    // expected-note @+2 {{the receive comes only here}}
    pp.compute backward stage 0 mb 0
    pp.recv gradient stage 0 mb 0 from 1
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// c. A send posted before the computation that produces what it sends.
pp.schedule @send_before_compute "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    // expected-error @+1 {{activation send of stage 0 micro-batch 0 is posted before the forward of stage 0 micro-batch 0 that produces it}}
    pp.send activation stage 0 mb 0 to 1
    // expected-note @+1 {{forward of stage 0 micro-batch 0 here}}
    pp.compute forward stage 0 mb 0
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// c. Stages on the same rank must not communicate through transfers.
pp.schedule @transfer_within_rank "gpipe" for @f microbatches 1 stage_rank [0, 0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{activation send of stage 0 micro-batch 0 connects stages 0 and 1, which are both on rank 0; dependencies within a rank must not use transfers}}
    pp.send activation stage 0 mb 0 to 0
    // expected-error @+1 {{activation recv of stage 1 micro-batch 0 connects stages 1 and 0, which are both on rank 0}}
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.compute backward stage 0 mb 0
  }
}

// -----

// d. A transfer to a rank that does not own the neighbour stage.
pp.schedule @wrong_peer "gpipe" for @f microbatches 1 stage_rank [0, 1, 2] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{activation send of stage 0 micro-batch 0 goes to rank 2, but its consumer stage 1 is on rank 1}}
    pp.send activation stage 0 mb 0 to 2
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.send activation stage 1 mb 0 to 2
    pp.recv gradient stage 1 mb 0 from 2
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
  pp.rank 2 {
    // expected-error @+1 {{activation recv of stage 2 micro-batch 0 comes from rank 0, but its producer stage 1 is on rank 1}}
    pp.recv activation stage 2 mb 0 from 0
    pp.compute forward stage 2 mb 0
    pp.compute backward stage 2 mb 0
    pp.send gradient stage 2 mb 0 to 1
  }
}

// -----

// d. A transfer past the ends of the pipeline.
pp.schedule @no_consumer "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{gradient send of stage 0 micro-batch 0 has no consumer: stage 0 is the first stage}}
    pp.send gradient stage 0 mb 0 to 1
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    // expected-error @+1 {{activation send of stage 1 micro-batch 0 has no consumer: stage 1 is the last stage}}
    pp.send activation stage 1 mb 0 to 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// d. A send nobody receives.
pp.schedule @unmatched_send "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{activation send of stage 0 micro-batch 0 has no matching 'pp.recv activation stage 1 mb 0 from 0' on rank 1}}
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// d. A receive nobody sends to.
pp.schedule @unmatched_recv "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    // expected-error @+1 {{gradient recv of stage 0 micro-batch 0 has no matching 'pp.send gradient stage 1 mb 0 to 0' on rank 1}}
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
  }
}

// -----

// d. The same tensor sent twice.
pp.schedule @duplicate_send "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-note @+1 {{first occurrence here}}
    pp.send activation stage 0 mb 0 to 1
    // expected-error @+1 {{duplicate activation send of stage 0 micro-batch 0}}
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// e. Rank 0 waits for a gradient before it sends the activation that rank 1
// needs to produce the gradient.
pp.schedule @deadlock "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{deadlock: rank 0 waits at this 'pp.recv' for rank 1, which waits for rank 0}}
    pp.recv gradient stage 0 mb 0 from 1
    pp.send activation stage 0 mb 0 to 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    // expected-note @+1 {{rank 1 waits here for rank 0}}
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// e. Rank 0 is stuck behind a cycle between ranks 1 and 2.
pp.schedule @deadlock_chain "gpipe" for @f microbatches 1 stage_rank [0, 1, 2] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    // expected-error @+1 {{deadlock: rank 0 waits at this 'pp.recv' for rank 1, which waits for rank 2, which waits for rank 1}}
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    // expected-note @+1 {{rank 1 waits here for rank 2}}
    pp.recv gradient stage 1 mb 0 from 2
    pp.send activation stage 1 mb 0 to 2
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
  pp.rank 2 {
    // expected-note @+1 {{rank 2 waits here for rank 1}}
    pp.recv activation stage 2 mb 0 from 1
    pp.compute forward stage 2 mb 0
    pp.compute backward stage 2 mb 0
    pp.send gradient stage 2 mb 0 to 1
  }
}

// -----

// The optimizer step applies every micro-batch's weight gradient.
pp.schedule @early_optimizer_step "gpipe" for @f microbatches 2 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{optimizer_step of stage 0 runs before the backward of stage 0 micro-batch 1 whose gradient it applies}}
    pp.optimizer_step stage 0
    // expected-note @+1 {{backward of stage 0 micro-batch 1 here}}
    pp.compute backward stage 0 mb 1
  }
}

// -----

// Several independent errors in one schedule are all reported.
pp.schedule @several "gpipe" for @f microbatches 2 stage_rank [0] {
  // expected-error @+1 {{missing backward of stage 0 micro-batch 0}}
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{backward of stage 0 micro-batch 1 runs before the forward of stage 0 micro-batch 1 it depends on}}
    pp.compute backward stage 0 mb 1
    // expected-note @+1 {{forward of stage 0 micro-batch 1 here}}
    pp.compute forward stage 0 mb 1
  }
}

// -----

// Gradients are reduced across replicas before they are applied.
pp.schedule @late_all_reduce "gpipe" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    // expected-note @+1 {{optimizer_step of stage 0 here}}
    pp.optimizer_step stage 0
    // expected-error @+1 {{all_reduce of stage 0 comes after the optimizer_step of stage 0 that applies the gradients it reduces}}
    pp.all_reduce stage 0
  }
}
