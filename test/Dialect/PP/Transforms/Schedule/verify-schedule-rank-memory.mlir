// A cap per rank bounds each rank by its own cap: a rank with half the
// memory rejects what the other holds.
// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-verify-schedule

// GPipe holds both micro-batches on each rank: within rank 0's cap of 2,
// above rank 1's cap of 1.
pp.schedule @half "gpipe" for @f microbatches 2 stage_rank [0, 1] attributes {memory_cap = array<f64: 2.0, 1.0>} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.recv activation stage 1 mb 1 from 0
    // expected-error @+1 {{'pp.compute' op leaves rank 1 holding 2 units of activation memory, above the schedule's memory_cap of 1}}
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward stage 1 mb 1
    pp.send gradient stage 1 mb 1 to 0
    pp.optimizer_step stage 1
  }
}

// -----

// The same schedule fits when rank 1 has as much memory as rank 0.
pp.schedule @equal "gpipe" for @f microbatches 2 stage_rank [0, 1] attributes {memory_cap = array<f64: 2.0, 2.0>} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.recv activation stage 1 mb 1 from 0
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward stage 1 mb 1
    pp.send gradient stage 1 mb 1 to 0
    pp.optimizer_step stage 1
  }
}

// -----

// A small rank 0 is checked against its own cap, not rank 1's.
pp.schedule @small_first "gpipe" for @f microbatches 2 stage_rank [0, 1] attributes {memory_cap = array<f64: 1.5, 2.0>} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    // expected-error @+1 {{'pp.compute' op leaves rank 0 holding 2 units of activation memory, above the schedule's memory_cap of 1.5}}
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.recv activation stage 1 mb 1 from 0
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward stage 1 mb 1
    pp.send gradient stage 1 mb 1 to 0
    pp.optimizer_step stage 1
  }
}
