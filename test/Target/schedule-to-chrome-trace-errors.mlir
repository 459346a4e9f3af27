// RUN: pp-translate --pp-schedule-to-chrome-trace -split-input-file -verify-diagnostics %s

// A schedule without a timeline: the ranks wait for each other.
// expected-note @below {{while simulating this schedule for its timeline}}
pp.schedule @deadlock "gpipe" for @f microbatches 1 stage_rank [0, 1] {
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

// -----

// A receive that nothing sends to blocks forever.
// expected-note @below {{while simulating this schedule for its timeline}}
pp.schedule @unmatched "gpipe" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    // expected-error @below {{deadlock: rank 0 waits at this 'pp.recv', which has no matching 'pp.send'}}
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

// Only schedule actions have a place on a timeline.
pp.schedule @foreign "gpipe" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @below {{'arith.constant' op cannot be exported: not a schedule action}}
    %c = arith.constant 0 : i32
  }
}
