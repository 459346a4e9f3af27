module {
  pp.schedule @train_step_schedule "zbv" for @train_step microbatches 4 stage_rank [0, 1, 1, 0] attributes {cost = #pp.cost<forward = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], backward_input = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], backward_weight = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], comm = 1.000000e-01 : f64, activation = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], stash = [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]>} {
    pp.rank 0 {
      pp.compute forward stage 0 mb 0
      pp.send activation stage 0 mb 0 to 1
      pp.compute forward stage 0 mb 1
      pp.send activation stage 0 mb 1 to 1
      pp.compute forward stage 0 mb 2
      pp.send activation stage 0 mb 2 to 1
      pp.recv activation stage 3 mb 0 from 1 grouped
      pp.compute forward stage 3 mb 0
      pp.compute backward_input stage 3 mb 0
      pp.send gradient stage 3 mb 0 to 1
      pp.recv activation stage 3 mb 1 from 1 grouped
      pp.compute backward_weight stage 3 mb 0
      pp.compute forward stage 3 mb 1
      pp.compute backward_input stage 3 mb 1
      pp.send gradient stage 3 mb 1 to 1
      pp.compute backward_weight stage 3 mb 1
      pp.compute forward stage 0 mb 3
      pp.send activation stage 0 mb 3 to 1
      pp.recv gradient stage 0 mb 0 from 1 grouped
      pp.compute backward_input stage 0 mb 0
      pp.compute backward_weight stage 0 mb 0
      pp.recv activation stage 3 mb 2 from 1
      pp.compute forward stage 3 mb 2
      pp.compute backward_input stage 3 mb 2
      pp.send gradient stage 3 mb 2 to 1
      pp.compute backward_weight stage 3 mb 2
      pp.recv gradient stage 0 mb 1 from 1
      pp.compute backward_input stage 0 mb 1
      pp.compute backward_weight stage 0 mb 1
      pp.recv activation stage 3 mb 3 from 1
      pp.compute forward stage 3 mb 3
      pp.compute backward_input stage 3 mb 3
      pp.send gradient stage 3 mb 3 to 1
      pp.compute backward_weight stage 3 mb 3
      pp.recv gradient stage 0 mb 2 from 1
      pp.compute backward_input stage 0 mb 2
      pp.compute backward_weight stage 0 mb 2
      pp.recv gradient stage 0 mb 3 from 1
      pp.compute backward_input stage 0 mb 3
      pp.compute backward_weight stage 0 mb 3
      pp.optimizer_step stage 0
      pp.optimizer_step stage 3
    }
    pp.rank 1 {
      pp.recv activation stage 1 mb 0 from 0
      pp.compute forward stage 1 mb 0
      pp.recv activation stage 1 mb 1 from 0
      pp.compute forward stage 2 mb 0
      pp.send activation stage 2 mb 0 to 0
      pp.recv activation stage 1 mb 2 from 0 grouped
      pp.compute forward stage 1 mb 1
      pp.compute forward stage 2 mb 1
      pp.send activation stage 2 mb 1 to 0
      pp.recv gradient stage 2 mb 0 from 0 grouped
      pp.compute backward_input stage 2 mb 0
      pp.compute backward_weight stage 2 mb 0
      pp.compute forward stage 1 mb 2
      pp.recv gradient stage 2 mb 1 from 0
      pp.compute backward_input stage 1 mb 0
      pp.send gradient stage 1 mb 0 to 0
      pp.compute backward_weight stage 1 mb 0
      pp.recv activation stage 1 mb 3 from 0
      pp.compute forward stage 2 mb 2
      pp.send activation stage 2 mb 2 to 0
      pp.compute backward_input stage 2 mb 1
      pp.compute backward_weight stage 2 mb 1
      pp.compute forward stage 1 mb 3
      pp.recv gradient stage 2 mb 2 from 0
      pp.compute backward_input stage 1 mb 1
      pp.send gradient stage 1 mb 1 to 0
      pp.compute backward_weight stage 1 mb 1
      pp.compute forward stage 2 mb 3
      pp.send activation stage 2 mb 3 to 0
      pp.compute backward_input stage 2 mb 2
      pp.compute backward_weight stage 2 mb 2
      pp.compute backward_input stage 1 mb 2
      pp.send gradient stage 1 mb 2 to 0
      pp.recv gradient stage 2 mb 3 from 0 grouped
      pp.compute backward_input stage 2 mb 3
      pp.compute backward_input stage 1 mb 3
      pp.send gradient stage 1 mb 3 to 0
      pp.compute backward_weight stage 1 mb 2
      pp.compute backward_weight stage 2 mb 3
      pp.compute backward_weight stage 1 mb 3
      pp.optimizer_step stage 1
      pp.optimizer_step stage 2
    }
  }
}

