// RUN: pp-opt --pp-verify-schedule %s | FileCheck %s

// Valid schedules pass through unchanged.

// CHECK-LABEL: pp.schedule @gpipe "gpipe" for @train_step microbatches 2 stage_rank [0, 1] {
// CHECK-NEXT:    pp.rank 0 {
// CHECK-NEXT:      pp.compute forward stage 0 mb 0
// CHECK-NEXT:      pp.send activation stage 0 mb 0 to 1
// CHECK-NEXT:      pp.compute forward stage 0 mb 1
// CHECK-NEXT:      pp.send activation stage 0 mb 1 to 1
// CHECK-NEXT:      pp.recv gradient stage 0 mb 0 from 1
// CHECK-NEXT:      pp.compute backward stage 0 mb 0
// CHECK-NEXT:      pp.recv gradient stage 0 mb 1 from 1
// CHECK-NEXT:      pp.compute backward stage 0 mb 1
// CHECK-NEXT:      pp.optimizer_step stage 0
// CHECK-NEXT:    }
// CHECK-NEXT:    pp.rank 1 {
// CHECK-NEXT:      pp.recv activation stage 1 mb 0 from 0
// CHECK-NEXT:      pp.compute forward stage 1 mb 0
// CHECK-NEXT:      pp.recv activation stage 1 mb 1 from 0
// CHECK-NEXT:      pp.compute forward stage 1 mb 1
// CHECK-NEXT:      pp.compute backward stage 1 mb 0
// CHECK-NEXT:      pp.send gradient stage 1 mb 0 to 0
// CHECK-NEXT:      pp.compute backward stage 1 mb 1
// CHECK-NEXT:      pp.send gradient stage 1 mb 1 to 0
// CHECK-NEXT:      pp.optimizer_step stage 1
// CHECK-NEXT:    }
// CHECK-NEXT:  }
pp.schedule @gpipe "gpipe" for @train_step microbatches 2 stage_rank [0, 1] {
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

// CHECK-LABEL: pp.schedule @one_f_one_b "1f1b" for @train_step microbatches 2 stage_rank [0, 1] {
// CHECK:         pp.rank 1 {
// CHECK-NEXT:      pp.recv activation stage 1 mb 0 from 0
// CHECK-NEXT:      pp.compute forward stage 1 mb 0
// CHECK-NEXT:      pp.compute backward stage 1 mb 0
// CHECK-NEXT:      pp.send gradient stage 1 mb 0 to 0
// CHECK-NEXT:      pp.recv activation stage 1 mb 1 from 0
// CHECK-NEXT:      pp.compute forward stage 1 mb 1
// CHECK-NEXT:      pp.compute backward stage 1 mb 1
// CHECK-NEXT:      pp.send gradient stage 1 mb 1 to 0
pp.schedule @one_f_one_b "1f1b" for @train_step microbatches 2 stage_rank [0, 1] {
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

// Split backward (zero-bubble style): W may come any time after its B.
// CHECK-LABEL: pp.schedule @split "zb-h1"
// CHECK:         pp.compute backward_input stage 0 mb 0
// CHECK:         pp.compute backward_weight stage 0 mb 0
pp.schedule @split "zb-h1" for @train_step microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward_input stage 0 mb 0
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward_input stage 0 mb 1
    pp.compute backward_weight stage 0 mb 0
    pp.compute backward_weight stage 0 mb 1
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward_input stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.recv activation stage 1 mb 1 from 0
    pp.compute forward stage 1 mb 1
    pp.compute backward_input stage 1 mb 1
    pp.send gradient stage 1 mb 1 to 0
    pp.compute backward_weight stage 1 mb 0
    pp.compute backward_weight stage 1 mb 1
    pp.optimizer_step stage 1
  }
}

// V shape: stages 0 and 3 on rank 0, stages 1 and 2 on rank 1. Dependencies
// within a rank need no transfer, only order.
// CHECK-LABEL: pp.schedule @vshape "zbv"
// CHECK:         pp.compute forward stage 1 mb 0
// CHECK-NEXT:    pp.compute forward stage 2 mb 0
pp.schedule @vshape "zbv" for @train_step microbatches 1 stage_rank [0, 1, 1, 0] {
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
    pp.compute forward stage 1 mb 0
    pp.compute forward stage 2 mb 0
    pp.send activation stage 2 mb 0 to 0
    pp.recv gradient stage 2 mb 0 from 0
    pp.compute backward stage 2 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}
