// RUN: pp-translate --pp-schedule-to-ascii -split-input-file -verify-diagnostics %s | FileCheck %s --strict-whitespace
// RUN: pp-translate --pp-schedule-to-ascii %S/Inputs/1f1b-4x8.mlir | FileCheck %s --strict-whitespace --check-prefix=1F1B

// Unit costs: F, B and W take 1, BW 2, transfers none; a receive starts when
// its send was posted. One 3-character cell per unit, "." where a rank idles.
// Rank 0 waits for the gradient of mb 0 (sent at 4) and of mb 2 (sent at 10);
// rank 1 waits for the activation of mb 0 (sent at 1) and idles at the end.

// CHECK:      time   |0              5              10
// CHECK-NEXT: rank 0 |F0 F1 .  .  BW0   F2 BW1   .  BW2   |
// CHECK-NEXT: rank 1 |.  F0 BW0   F1 BW1   F2 BW2   .  .  |
// CHECK-NEXT: makespan 12, bubble: rank 0 25.0%, rank 1 25.0%
pp.schedule @schedule_1f1b "1f1b" for @train_step microbatches 3 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.compute forward stage 0 mb 2
    pp.send activation stage 0 mb 2 to 1
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
    pp.recv gradient stage 0 mb 2 from 1
    pp.compute backward stage 0 mb 2
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
    pp.recv activation stage 1 mb 2 from 0
    pp.compute forward stage 1 mb 2
    pp.compute backward stage 1 mb 2
    pp.send gradient stage 1 mb 2 to 0
    pp.optimizer_step stage 1
  }
}

// -----

// Split backward: B and W are cells of their own; all-reduces and optimizer
// steps take no time and are not drawn.

// CHECK:      time   |0              5
// CHECK-NEXT: rank 0 |F0 .  .  .  B0 W0 |
// CHECK-NEXT: rank 1 |.  F0 BW0   .  .  |
// CHECK-NEXT: makespan 6, bubble: rank 0 50.0%, rank 1 50.0%
pp.schedule @split "zb-h1" for @train_step microbatches 1 stage_rank [0, 1] {
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
}

// -----

// A rank that runs two stages labels its cells with the stage too; the cells
// widen so that every label keeps a space after it.

// CHECK:      time   |0                        5                        10
// CHECK-NEXT: rank 0 |F0.0 .    F2.0 .    .    .    BW2.0     .    .    BW0.0     |
// CHECK-NEXT: rank 1 |.    F1.0 .    F3.0 BW3.0     .    .    BW1.0     .    .    |
// CHECK-NEXT: makespan 12, bubble: rank 0 50.0%, rank 1 50.0%
pp.schedule @interleaved "interleaved-1f1b" for @f microbatches 1 stage_rank [0, 1, 0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv activation stage 2 mb 0 from 1
    pp.compute forward stage 2 mb 0
    pp.send activation stage 2 mb 0 to 1
    pp.recv gradient stage 2 mb 0 from 1
    pp.compute backward stage 2 mb 0
    pp.send gradient stage 2 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.send activation stage 1 mb 0 to 0
    pp.recv activation stage 3 mb 0 from 0
    pp.compute forward stage 3 mb 0
    pp.compute backward stage 3 mb 0
    pp.send gradient stage 3 mb 0 to 0
    pp.recv gradient stage 1 mb 0 from 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// -----

// A schedule without a timeline: the ranks wait for each other.
// CHECK-NOT:  rank
// expected-note @below {{while simulating this schedule for its timeline}}
pp.schedule @deadlock "1f1b" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @below {{deadlock: rank 0 waits at this 'pp.recv' for rank 1, which waits for rank 0}}
    pp.recv gradient stage 0 mb 0 from 1
    pp.send activation stage 0 mb 0 to 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    // expected-note @below {{rank 1 waits here for rank 0}}
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// The 4 x 8 1f1b schedule: a warm-up of 4 - 1 - r forwards on rank r, then
// one forward, one backward; every rank idles 9 of the 33 units.
// 1F1B:      time   |0              5              10             15             20             25             30
// 1F1B-NEXT: rank 0 |F0 F1 F2 F3 .  .  .  .  .  .  BW0   F4 BW1   F5 BW2   F6 BW3   F7 BW4   .  BW5   .  BW6   .  BW7   |
// 1F1B-NEXT: rank 1 |.  F0 F1 F2 .  .  .  .  BW0   F3 BW1   F4 BW2   F5 BW3   F6 BW4   F7 BW5   .  BW6   .  BW7   .  .  |
// 1F1B-NEXT: rank 2 |.  .  F0 F1 .  .  BW0   F2 BW1   F3 BW2   F4 BW3   F5 BW4   F6 BW5   F7 BW6   .  BW7   .  .  .  .  |
// 1F1B-NEXT: rank 3 |.  .  .  F0 BW0   F1 BW1   F2 BW2   F3 BW3   F4 BW4   F5 BW5   F6 BW6   F7 BW7   .  .  .  .  .  .  |
// 1F1B-NEXT: makespan 33, bubble: rank 0 27.3%, rank 1 27.3%, rank 2 27.3%, rank 3 27.3%
// 1F1B-NOT:  {{.}}
