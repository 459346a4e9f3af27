module {
  pp.schedule @train_step_schedule "zb-h1" for @train_step microbatches 3 stage_rank [0, 1, 2] {
    pp.rank 0 {
      pp.compute forward stage 0 mb 0
      pp.send activation stage 0 mb 0 to 1
      pp.compute forward stage 0 mb 1
      pp.send activation stage 0 mb 1 to 1
      pp.compute forward stage 0 mb 2
      pp.send activation stage 0 mb 2 to 1
      pp.recv gradient stage 0 mb 0 from 1
      pp.compute backward_input stage 0 mb 0
      pp.compute backward_weight stage 0 mb 0
      pp.recv gradient stage 0 mb 1 from 1
      pp.compute backward_input stage 0 mb 1
      pp.compute backward_weight stage 0 mb 1
      pp.recv gradient stage 0 mb 2 from 1
      pp.compute backward_input stage 0 mb 2
      pp.compute backward_weight stage 0 mb 2
      pp.optimizer_step stage 0
    }
    pp.rank 1 {
      pp.recv activation stage 1 mb 0 from 0
      pp.compute forward stage 1 mb 0
      pp.send activation stage 1 mb 0 to 2
      pp.recv activation stage 1 mb 1 from 0
      pp.compute forward stage 1 mb 1
      pp.send activation stage 1 mb 1 to 2
      pp.recv gradient stage 1 mb 0 from 2
      pp.compute backward_input stage 1 mb 0
      pp.send gradient stage 1 mb 0 to 0
      pp.recv activation stage 1 mb 2 from 0
      pp.compute forward stage 1 mb 2
      pp.send activation stage 1 mb 2 to 2
      pp.recv gradient stage 1 mb 1 from 2
      pp.compute backward_input stage 1 mb 1
      pp.send gradient stage 1 mb 1 to 0
      pp.compute backward_weight stage 1 mb 0
      pp.recv gradient stage 1 mb 2 from 2
      pp.compute backward_input stage 1 mb 2
      pp.send gradient stage 1 mb 2 to 0
      pp.compute backward_weight stage 1 mb 1
      pp.compute backward_weight stage 1 mb 2
      pp.optimizer_step stage 1
    }
    pp.rank 2 {
      pp.recv activation stage 2 mb 0 from 1
      pp.compute forward stage 2 mb 0
      pp.compute backward_input stage 2 mb 0
      pp.send gradient stage 2 mb 0 to 1
      pp.recv activation stage 2 mb 1 from 1
      pp.compute forward stage 2 mb 1
      pp.compute backward_input stage 2 mb 1
      pp.send gradient stage 2 mb 1 to 1
      pp.recv activation stage 2 mb 2 from 1
      pp.compute forward stage 2 mb 2
      pp.compute backward_input stage 2 mb 2
      pp.send gradient stage 2 mb 2 to 1
      pp.compute backward_weight stage 2 mb 0
      pp.compute backward_weight stage 2 mb 1
      pp.compute backward_weight stage 2 mb 2
      pp.optimizer_step stage 2
    }
  }
}

