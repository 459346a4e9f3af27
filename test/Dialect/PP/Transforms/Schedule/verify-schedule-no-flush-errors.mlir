// RUN: pp-opt --pp-verify-schedule=semantics=rendezvous -split-input-file -verify-diagnostics %s

// Steps without a flush need two weight versions.
pp.schedule @one_version "1f1b" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    // expected-error @+1 {{'pp.compute' op is 'next_step', but the schedule keeps one weight version: only a schedule with 'weight_versions = 2' runs steps without a flush}}
    pp.compute forward stage 0 mb 0 next_step
  }
}

// -----

pp.schedule @both "pipedream-2bw" for @f microbatches 1 stage_rank [0]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    // expected-error @+1 {{'pp.send' op cannot be both 'first_step' and 'next_step'}}
    pp.send activation stage 0 mb 0 to 0 first_step next_step
  }
}

// -----

pp.schedule @next_backward "pipedream-2bw" for @f microbatches 1 stage_rank [0]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    // expected-error @+1 {{'pp.compute' op is 'next_step' but not a forward: only forwards of the next step fill a step's cool-down}}
    pp.compute backward stage 0 mb 0 next_step
  }
}

// -----

// The next step's actions must be the warm-up that its call skips.
pp.schedule @not_the_warmup "pipedream-2bw" for @f microbatches 2 stage_rank [0, 1]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    // expected-note @+1 {{the 'first_step' action}}
    pp.compute forward stage 0 mb 0 first_step
    pp.send activation stage 0 mb 0 to 1 first_step
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{'pp.compute' op is 'next_step' action #0 of rank 0, but the rank's 'first_step' action #0 is not the same action: the next step's call skips its 'first_step' actions, so these must repeat them in order}}
    pp.compute forward stage 0 mb 1 next_step
    pp.send activation stage 0 mb 1 to 1 next_step
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.optimizer_step stage 1
  }
}

// -----

// A next-step forward overwrites its micro-batch's buffers: this step's
// backward of that micro-batch must have run.
pp.schedule @slot_in_use "pipedream-2bw" for @f microbatches 2 stage_rank [0, 1]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 first_step
    pp.send activation stage 0 mb 0 to 1 first_step
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    // expected-error @+1 {{'pp.compute' op is 'next_step' on stage 0 micro-batch 0 but runs before this step's action of that micro-batch, whose buffers the next step's reuse}}
    pp.compute forward stage 0 mb 0 next_step
    pp.send activation stage 0 mb 0 to 1 next_step
    pp.recv gradient stage 0 mb 0 from 1
    // expected-note @+1 {{this step's action}}
    pp.compute backward stage 0 mb 0
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.optimizer_step stage 1
  }
}

// -----

// One step runs (the run of one step is flushed 1F1B), but back to back a
// rendezvous send of the next step's first activation waits for rank 1,
// which waits at its last gradient send for rank 0's receive behind it:
// the send and that receive must be one exchange group.
// expected-error @+2 {{fails when 3 steps run back to back without a flush (above, micro-batch j of step s is 2 * s + j)}}
// expected-note @+1 {{the ranks wait for each other only with rendezvous transfers}}
pp.schedule @back_to_back "pipedream-2bw" for @f microbatches 2 stage_rank [0, 1]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 first_step
    pp.send activation stage 0 mb 0 to 1 first_step
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1 grouped
    pp.compute backward stage 0 mb 0
    pp.compute forward stage 0 mb 0 next_step
    // expected-error @+1 {{deadlock: rank 0 waits at this 'pp.send' for rank 1, which waits for rank 0}}
    pp.send activation stage 0 mb 0 to 1 next_step
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
    // expected-note @+1 {{rank 1 waits here for rank 0}}
    pp.send gradient stage 1 mb 1 to 0
    pp.optimizer_step stage 1
  }
}
