// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=zb-h1 num-stages=4 num-ranks=2"

// expected-error @+1 {{schedule 'zb-h1' runs one stage per rank, but there are 4 stages on 2 ranks}}
module {
}
