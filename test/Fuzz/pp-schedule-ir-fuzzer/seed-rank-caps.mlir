module {
  pp.schedule @train_step_schedule "1f1b" for @train_step microbatches 2 stage_rank [0, 1] attributes {cost = #pp.cost<forward = [1.000000e+00, 2.000000e+00], backward_input = [1.000000e+00, 1.000000e+00], backward_weight = [1.000000e+00, 1.000000e+00], comm = 5.000000e-01 : f64, activation = [3.000000e+00, 1.000000e+00], stash = [0.000000e+00, 0.000000e+00]>, memory_cap = array<f64: 8.000000e+00, 2.000000e+00>} {
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
      pp.compute backward stage 1 mb 0
      pp.send gradient stage 1 mb 0 to 0
      pp.recv activation stage 1 mb 1 from 0
      pp.compute forward stage 1 mb 1
      pp.compute backward stage 1 mb 1
      pp.send gradient stage 1 mb 1 to 0
      pp.optimizer_step stage 1
    }
  }
}

