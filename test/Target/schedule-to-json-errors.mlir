// RUN: pp-translate --pp-schedule-to-json -split-input-file -verify-diagnostics %s

// expected-error @below {{no 'pp.schedule' to export}}
module {
  func.func private @train_step()
}

// -----

// expected-note @below {{the first one is here}}
pp.schedule @a "gpipe" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
  }
}
// expected-error @below {{expected exactly one 'pp.schedule' to export, found 2}}
pp.schedule @b "1f1b" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
  }
}

// -----

pp.schedule @overlap "dualpipev" for @f microbatches 2 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    // expected-error @below {{runs overlapped with the forward before it, which pp-schedule-v1 cannot express; export it as a PyTorch CSV instead}}
    pp.compute backward stage 0 mb 0 overlap
    pp.compute backward stage 0 mb 1
  }
}

// -----

// Imported again it would train synchronously.
// expected-error @below {{'pp.schedule' op keeps 2 weight versions (pipedream-2bw), which pp-schedule-v1 cannot express}}
pp.schedule @two_versions "pipedream-2bw" for @f microbatches 1 stage_rank [0]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
  }
}

// -----

// expected-error @below {{has per-micro-batch costs, which pp-schedule-v1 cannot express}}
pp.schedule @tables "gpipe" for @f microbatches 2 stage_rank [0] attributes {cost = #pp.cost<forward = [2.0], backward_input = [1.0], backward_weight = [1.0], comm = 0.0, activation = [1.0], stash = [0.0], microbatch_forward = [[1.0, 2.0]]>} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 0
    pp.compute backward stage 0 mb 1
  }
}
