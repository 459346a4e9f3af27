// RUN: pp-translate --pp-schedule-to-csv %s | FileCheck %s --match-full-lines
// RUN: pp-translate --pp-schedule-to-csv %S/Inputs/1f1b-4x8.mlir | FileCheck %s --check-prefix=1F1B --match-full-lines
// RUN: pp-translate --pp-schedule-to-csv %S/Inputs/1f1b-4x8.mlir -o %t.1f1b.csv
// RUN: pp-translate --import-pytorch-csv %t.1f1b.csv | pp-opt --pp-verify-schedule | pp-translate --pp-schedule-to-csv | diff %t.1f1b.csv -
// RUN: not pp-translate --pp-schedule-to-csv %S/schedule-to-json-errors.mlir -split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// One row per rank, PyTorch's `{stage}{op}{micro-batch}` for every action:
// backward_input is I, the fused backward B. An all-reduce is PyTorch's
// REDUCE_GRAD and its WAIT_REDUCE_GRAD; optimizer steps have no PyTorch
// action and are left out; a rank without actions is an empty row.

// CHECK:      0F0,0SEND_F0,0RECV_B0,0I0,0W0,0REDUCE_GRAD,0WAIT_REDUCE_GRAD
// CHECK-NEXT: 1RECV_F0,1F0,1B0,1SEND_B0
// CHECK-EMPTY:
// CHECK-NOT:  {{.}}
func.func private @train_step()
pp.schedule @train_step_schedule "zb-h1" for @train_step microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward_input stage 0 mb 0
    pp.compute backward_weight stage 0 mb 0
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.optimizer_step stage 1
  }
  pp.rank 2 {
  }
}

// 1F1B:         0F0,0SEND_F0,0F1,0SEND_F1,0F2,0SEND_F2,0F3,0SEND_F3,0RECV_B0,0B0,0F4,0SEND_F4,0RECV_B1,0B1,0F5,0SEND_F5,0RECV_B2,0B2,0F6,0SEND_F6,0RECV_B3,0B3,0F7,0SEND_F7,0RECV_B4,0B4,0RECV_B5,0B5,0RECV_B6,0B6,0RECV_B7,0B7
// 1F1B-NEXT:    1RECV_F0,1F0,1SEND_F0,1RECV_F1,1F1,1SEND_F1,1RECV_F2,1F2,1SEND_F2,1RECV_B0,1B0,1SEND_B0,{{.*}}
// 1F1B-NEXT:    2RECV_F0,{{.*}}
// 1F1B-NEXT:    3RECV_F0,3F0,3B0,3SEND_B0,{{.*}},3B7,3SEND_B7
// 1F1B-NOT:     {{.}}

// ERR: error: no 'pp.schedule' to export
// ERR: error: expected exactly one 'pp.schedule' to export, found 2
