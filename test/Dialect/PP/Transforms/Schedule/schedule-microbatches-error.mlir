// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=-1"

// expected-error @+1 {{num-microbatches must be at least 1, got -1}}
module {
}
