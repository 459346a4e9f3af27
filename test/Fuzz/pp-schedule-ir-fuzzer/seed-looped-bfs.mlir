module {
  pp.schedule @train_step_schedule "looped-bfs" for @train_step microbatches 2 stage_rank [0, 1, 0, 1] {
    pp.rank 0 {
      pp.compute forward stage 0 mb 0
      pp.send activation stage 0 mb 0 to 1
      pp.compute forward stage 0 mb 1
      pp.send activation stage 0 mb 1 to 1
      pp.recv activation stage 2 mb 0 from 1
      pp.compute forward stage 2 mb 0
      pp.send activation stage 2 mb 0 to 1
      pp.recv activation stage 2 mb 1 from 1
      pp.compute forward stage 2 mb 1
      pp.send activation stage 2 mb 1 to 1
      pp.recv gradient stage 2 mb 1 from 1
      pp.compute backward stage 2 mb 1
      pp.send gradient stage 2 mb 1 to 1
      pp.recv gradient stage 2 mb 0 from 1
      pp.compute backward stage 2 mb 0
      pp.send gradient stage 2 mb 0 to 1
      pp.recv gradient stage 0 mb 1 from 1
      pp.compute backward stage 0 mb 1
      pp.recv gradient stage 0 mb 0 from 1
      pp.compute backward stage 0 mb 0
      pp.optimizer_step stage 0
      pp.optimizer_step stage 2
    }
    pp.rank 1 {
      pp.recv activation stage 1 mb 0 from 0
      pp.compute forward stage 1 mb 0
      pp.send activation stage 1 mb 0 to 0
      pp.recv activation stage 1 mb 1 from 0
      pp.compute forward stage 1 mb 1
      pp.send activation stage 1 mb 1 to 0
      pp.recv activation stage 3 mb 0 from 0
      pp.compute forward stage 3 mb 0
      pp.recv activation stage 3 mb 1 from 0
      pp.compute forward stage 3 mb 1
      pp.compute backward stage 3 mb 1
      pp.send gradient stage 3 mb 1 to 0
      pp.compute backward stage 3 mb 0
      pp.send gradient stage 3 mb 0 to 0
      pp.recv gradient stage 1 mb 1 from 0
      pp.compute backward stage 1 mb 1
      pp.send gradient stage 1 mb 1 to 0
      pp.recv gradient stage 1 mb 0 from 0
      pp.compute backward stage 1 mb 0
      pp.send gradient stage 1 mb 0 to 0
      pp.optimizer_step stage 1
      pp.optimizer_step stage 3
    }
  }
}

