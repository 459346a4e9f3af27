// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-schedule="schedule=zigzag num-stages=2"

// expected-error @+1 {{unknown schedule 'zigzag'; expected one of: gpipe, 1f1b, interleaved-1f1b, looped-bfs, zb-h1, zb-h2, zbv, v-half, v-min, dualpipev, greedy, hanayo, interleaved-zb, pipedream-2bw, exact, auto}}
module {
}
