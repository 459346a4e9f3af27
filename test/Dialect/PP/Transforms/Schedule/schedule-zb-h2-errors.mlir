// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=zb-h2 num-stages=6 num-ranks=3"

// expected-error @+1 {{schedule 'zb-h2' runs one stage per rank, but there are 6 stages on 3 ranks}}
module {
}
