// Every problem of a cost file is an error naming the file and the entry.
// RUN: rm -rf %t && split-file %s %t && cd %t
// RUN: pp-opt missing.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=absent.json"
// RUN: pp-opt syntax.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=syntax.json"
// RUN: pp-opt not-object.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=not-object.json"
// RUN: pp-opt format.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=format.json"
// RUN: pp-opt unit.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=unit.json"
// RUN: pp-opt transfer.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=transfer.json"
// RUN: pp-opt cap.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=cap.json"
// RUN: pp-opt cap-rank.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=cap-rank.json"
// RUN: pp-opt cap-empty.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=cap-empty.json"
// RUN: pp-opt cap-kind.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=cap-kind.json"
// RUN: pp-opt cap-count.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=cap-count.json"
// RUN: pp-opt unknown.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=unknown.json"
// RUN: pp-opt empty.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=empty.json"
// RUN: pp-opt order.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=order.json"
// RUN: pp-opt missing-field.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=missing-field.json"
// RUN: pp-opt negative.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=negative.json"
// RUN: pp-opt optimizer-some.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=optimizer-some.json"
// RUN: pp-opt overhead.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=overhead.json"
// RUN: pp-opt stash.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=stash.json"
// RUN: pp-opt count.mlir -verify-diagnostics --pp-schedule="num-stages=3 cost-file=negative-free.json"
// RUN: pp-opt option-count.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=negative-free.json forward-cost=1,2,3"
// RUN: pp-opt option-stash.mlir -verify-diagnostics --pp-schedule="num-stages=2 cost-file=negative-free.json activation-memory=0.25"

//--- missing.mlir
// expected-error @below {{cannot read cost file 'absent.json': No such file or directory}}
module {}

//--- syntax.json
{"format": "pp-profile-v1",
 "stages": [
   {"stage": 0 "forward": 1}
 ]}
//--- syntax.mlir
// expected-error @below {{cost file 'syntax.json' is not valid JSON: line 3, column 16: Expected , or } after object property}}
module {}

//--- not-object.json
[1, 2]
//--- not-object.mlir
// expected-error @below {{cost file 'not-object.json': must hold a pp-profile-v1 object, got [1,2]}}
module {}

//--- format.json
{"format": "pp-profile-v0", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "stages": []}
//--- format.mlir
// expected-error @below {{cost file 'format.json': format must be "pp-profile-v1", got "pp-profile-v0"}}
module {}

//--- unit.json
{"format": "pp-profile-v1", "time_unit": 1, "memory_unit": "bytes", "transfer": 0, "stages": []}
//--- unit.mlir
// expected-error @below {{cost file 'unit.json': time_unit must be a non-empty string, got 1}}
module {}

//--- transfer.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": "fast", "stages": []}
//--- transfer.mlir
// expected-error @below {{cost file 'transfer.json': transfer must be a number, got "fast"}}
module {}

//--- cap.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "memory_cap": 0, "stages": []}
//--- cap.mlir
// expected-error @below {{cost file 'cap.json': memory_cap must be positive (leave it out for no cap)}}
module {}

// A list of caps has one positive number per rank.
//--- cap-rank.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "memory_cap": [4, 0], "stages": []}
//--- cap-rank.mlir
// expected-error @below {{cost file 'cap-rank.json': memory_cap[1] must be positive (leave it out for no cap)}}
module {}

//--- cap-empty.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "memory_cap": [], "stages": []}
//--- cap-empty.mlir
// expected-error @below {{cost file 'cap-empty.json': memory_cap must be a number or a non-empty array}}
module {}

//--- cap-kind.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "memory_cap": [4, "half"], "stages": []}
//--- cap-kind.mlir
// expected-error @below {{cost file 'cap-kind.json': memory_cap[1] must be a number, got "half"}}
module {}

//--- cap-count.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "memory_cap": [4, 2, 2],
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0.5},
   {"stage": 1, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0.5}
 ]}
//--- cap-count.mlir
// expected-error @below {{cost file 'cap-count.json': memory_cap has 3 values, expected 1 or one per rank (2)}}
module {}

//--- unknown.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "memorycap": 4, "stages": []}
//--- unknown.mlir
// expected-error @below {{cost file 'unknown.json': has an unknown field 'memorycap'; expected: format, time_unit, memory_unit, transfer, memory_cap, stages, step_overhead, meta}}
module {}

//--- empty.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "stages": []}
//--- empty.mlir
// expected-error @below {{cost file 'empty.json': stages must be a non-empty array, got []}}
module {}

//--- order.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0},
   {"stage": 2, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0}
 ]}
//--- order.mlir
// expected-error @below {{cost file 'order.json': stages[1].stage must be 1: stages are listed in order}}
module {}

//--- missing-field.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "activation_memory": 1, "stash_memory": 0},
   {"stage": 1, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0}
 ]}
//--- missing-field.mlir
// expected-error @below {{cost file 'missing-field.json': stages[0]: lacks the field 'backward_weight'}}
module {}

//--- negative.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0},
   {"stage": 1, "forward": -1.5, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0}
 ]}
//--- negative.mlir
// expected-error @below {{cost file 'negative.json': stages[1].forward must not be negative, got -1.5}}
module {}

//--- optimizer-some.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0, "optimizer": 0.5},
   {"stage": 1, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0}
 ]}
//--- optimizer-some.mlir
// expected-error @below {{cost file 'optimizer-some.json': stages[1] must give optimizer as stages[0] does, or not at all}}
module {}

//--- overhead.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0, "step_overhead": -2,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0}
 ]}
//--- overhead.mlir
// expected-error @below {{cost file 'overhead.json': step_overhead must not be negative, got -2}}
module {}

//--- stash.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 2}
 ]}
//--- stash.mlir
// expected-error @below {{cost file 'stash.json': stages[0].stash_memory 2 exceeds the activation_memory 1 it is part of}}
module {}

//--- negative-free.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0.5},
   {"stage": 1, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0.5}
 ]}
//--- count.mlir
// expected-error @below {{cost file 'negative-free.json' describes 2 stages, but there are 3 to schedule}}
module {}

// The options are checked against the file's stages, and what they make
// of it is checked like a #pp.cost.
//--- option-count.mlir
// expected-error @below {{forward-cost has 3 values, expected 1 or one per stage (2)}}
module {}
//--- option-stash.mlir
// expected-error @below {{stage 0 stashes 0.5 for W but holds only 0.25}}
module {}
