// RUN: pp-translate --pp-schedule-to-csv -verify-diagnostics %s

// PyTorch's pipelining has no delayed update: it would train synchronously.
// expected-error @below {{'pp.schedule' op keeps 2 weight versions (pipedream-2bw), which PyTorch's schedule CSV cannot express}}
pp.schedule @two_versions "pipedream-2bw" for @f microbatches 1 stage_rank [0]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
  }
}
