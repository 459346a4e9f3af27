// One value of a per-stage cost option stands for every stage, at any stage
// count. (The broadcast list used to be a temporary freed before use, which
// gave costs such as [0, INF, 1.5, ...], false negative-cost errors and a
// segfault at 16384 stages.)
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=3 num-microbatches=3 forward-cost=1.5 backward-input-cost=2 backward-weight-cost=0.25 activation-memory=3 stash-memory=1" | FileCheck %s
// RUN: for n in 1 2 5 8 17 64 257 1024 16384; do \
// RUN:   pp-opt %s --pp-schedule="schedule=1f1b num-stages=$n num-microbatches=1 forward-cost=1.5 activation-memory=3" \
// RUN:   | grep -o "forward = \[[^]]*\]" | grep -o "[0-9][^],]*" | sort | uniq -c \
// RUN:   | FileCheck %s --check-prefix=STAGES-$n --implicit-check-not=e || exit 1; \
// RUN: done

// CHECK: cost = #pp.cost<forward = [1.5{{0*}}e+00, 1.5{{0*}}e+00, 1.5{{0*}}e+00], backward_input = [2.0{{0*}}e+00, 2.0{{0*}}e+00, 2.0{{0*}}e+00], backward_weight = [2.5{{0*}}e-01, 2.5{{0*}}e-01, 2.5{{0*}}e-01], comm = 0.0{{0*}}e+00 : f64, activation = [3.0{{0*}}e+00, 3.0{{0*}}e+00, 3.0{{0*}}e+00], stash = [1.0{{0*}}e+00, 1.0{{0*}}e+00, 1.0{{0*}}e+00]>
// STAGES-1: {{^ *}}1 1.5{{0*}}e+00{{$}}
// STAGES-2: {{^ *}}2 1.5{{0*}}e+00{{$}}
// STAGES-5: {{^ *}}5 1.5{{0*}}e+00{{$}}
// STAGES-8: {{^ *}}8 1.5{{0*}}e+00{{$}}
// STAGES-17: {{^ *}}17 1.5{{0*}}e+00{{$}}
// STAGES-64: {{^ *}}64 1.5{{0*}}e+00{{$}}
// STAGES-257: {{^ *}}257 1.5{{0*}}e+00{{$}}
// STAGES-1024: {{^ *}}1024 1.5{{0*}}e+00{{$}}
// STAGES-16384: {{^ *}}16384 1.5{{0*}}e+00{{$}}
module {
}
