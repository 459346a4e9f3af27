// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-lower-random-seeds

// A global stored with something else than its advanced value.
module {
  ml_program.global private mutable @state(dense<0> : tensor<i64>) : tensor<i64>
  func.func @train_step(%x: tensor<i64>) {
    // expected-error @+1 {{pp-lower-random-seeds: mutable global state is supported only as torch-mlir's random seed}}
    ml_program.global_store @state = %x : tensor<i64>
    return
  }
}

// -----

// A global read without being advanced.
module {
  ml_program.global private mutable @state(dense<0> : tensor<i64>) : tensor<i64>
  func.func @train_step() -> tensor<i64> {
    // expected-error @+1 {{pp-lower-random-seeds: reads the global 'state' otherwise than to advance a random seed}}
    %g = ml_program.global_load @state : tensor<i64>
    return %g : tensor<i64>
  }
}
