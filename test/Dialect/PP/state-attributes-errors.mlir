// RUN: pp-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{argument #0 has 'pp.state' = 1 : i64; an argument takes it as a unit attribute}}
func.func @arg_number(%s: tensor<3xf32> {pp.state = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{result #0 has 'pp.state' = unit; a result names the state argument it updates by its number}}
func.func @result_unit(%s: tensor<3xf32> {pp.state}) -> (tensor<3xf32> {pp.state}) {
  return %s : tensor<3xf32>
}

// -----

// expected-error @+1 {{result #0 updates argument #0, which is not marked 'pp.state'}}
func.func @not_state(%s: tensor<3xf32>) -> (tensor<3xf32> {pp.state = 0 : i64}) {
  return %s : tensor<3xf32>
}

// -----

// expected-error @+1 {{result #0 updates argument #4, which is not marked 'pp.state'}}
func.func @out_of_range(%s: tensor<3xf32> {pp.state}) -> (tensor<3xf32> {pp.state = 4 : i64}) {
  return %s : tensor<3xf32>
}

// -----

// expected-error @+1 {{argument #0 has 'pp.state' = "x", which is not a unit attribute (argument) or an argument number (result)}}
func.func @bad_value(%s: tensor<3xf32> {pp.state = "x"}) {
  return
}
