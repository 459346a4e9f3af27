// RUN: pp-opt %s -verify-diagnostics --pp-split-microbatches=num-microbatches=0

// expected-error @+1 {{num-microbatches must be at least 1, got 0}}
module {
}
