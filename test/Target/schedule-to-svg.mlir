// RUN: pp-translate --pp-schedule-to-svg -split-input-file -verify-diagnostics %s | FileCheck %s
// RUN: pp-translate --pp-schedule-to-svg %S/Inputs/1f1b-4x8.mlir | FileCheck %s --check-prefix=1F1B

// Unit costs as in the ASCII timeline: a 24px box per time unit from x = 64,
// one 24px row per rank every 30px from y = 48. B, W and BW have boxes of
// their own, coloured by the phase class; transfers, all-reduces and
// optimizer steps take no time and are not drawn. Each box is labelled
// with its micro-batch and titled with its action and interval.

// CHECK-LABEL: <svg xmlns="http://www.w3.org/2000/svg" width="600" height="140" viewBox="0 0 600 140" font-family="monospace" font-size="11">
// CHECK:       .forward { fill: #4e79a7; }
// CHECK-NEXT:  .backward_input { fill: #59a14f; }
// CHECK-NEXT:  .backward_weight { fill: #f28e2b; }
// CHECK-NEXT:  .backward { fill: #b07aa1; }
// CHECK:       <text class="title" x="64" y="16">pp.schedule @split &quot;zb-h1&quot;: 2 ranks, 1 micro-batch, makespan 6 (unit costs)</text>
// The axis: a tick every 2 units (48px), 0 to the makespan.
// CHECK-NEXT:  <g class="axis" stroke="#000000">
// CHECK-NEXT:    <line x1="64" y1="44" x2="208" y2="44"/>
// CHECK-NEXT:    <line x1="64" y1="40" x2="64" y2="44"/>
// CHECK-NEXT:    <text class="tick" x="64" y="37" stroke="none">0</text>
// CHECK-NEXT:    <line x1="112" y1="40" x2="112" y2="44"/>
// CHECK-NEXT:    <text class="tick" x="112" y="37" stroke="none">2</text>
// CHECK-NEXT:    <line x1="160" y1="40" x2="160" y2="44"/>
// CHECK-NEXT:    <text class="tick" x="160" y="37" stroke="none">4</text>
// CHECK-NEXT:    <line x1="208" y1="40" x2="208" y2="44"/>
// CHECK-NEXT:    <text class="tick" x="208" y="37" stroke="none">6</text>
// CHECK-NEXT:  </g>
// Rank 0 idles from 1 to 4, while rank 1 runs F and BW.
// CHECK-NEXT:  <g class="rank" id="rank0">
// CHECK-NEXT:    <text x="4" y="64">rank 0</text>
// CHECK-NEXT:    <rect class="forward" x="64" y="48" width="24" height="24"><title>F stage 0 mb 0, 0 to 1</title></rect>
// CHECK-NEXT:    <text class="box" x="76" y="64">0</text>
// CHECK-NEXT:    <rect class="backward_input" x="160" y="48" width="24" height="24"><title>B stage 0 mb 0, 4 to 5</title></rect>
// CHECK-NEXT:    <text class="box" x="172" y="64">0</text>
// CHECK-NEXT:    <rect class="backward_weight" x="184" y="48" width="24" height="24"><title>W stage 0 mb 0, 5 to 6</title></rect>
// CHECK-NEXT:    <text class="box" x="196" y="64">0</text>
// CHECK-NEXT:  </g>
// CHECK-NEXT:  <g class="rank" id="rank1">
// CHECK-NEXT:    <text x="4" y="94">rank 1</text>
// CHECK-NEXT:    <rect class="forward" x="88" y="78" width="24" height="24"><title>F stage 1 mb 0, 1 to 2</title></rect>
// CHECK-NEXT:    <text class="box" x="100" y="94">0</text>
// CHECK-NEXT:    <rect class="backward" x="112" y="78" width="48" height="24"><title>BW stage 1 mb 0, 2 to 4</title></rect>
// CHECK-NEXT:    <text class="box" x="136" y="94">0</text>
// CHECK-NEXT:  </g>
// CHECK-NEXT:  <g class="legend">
// CHECK-NEXT:    <rect class="forward" x="64" y="116" width="12" height="12"/>
// CHECK-NEXT:    <text x="80" y="126">F forward</text>
// CHECK-NEXT:    <rect class="backward_input" x="164" y="116" width="12" height="12"/>
// CHECK-NEXT:    <text x="180" y="126">B backward input</text>
// CHECK-NEXT:    <rect class="backward_weight" x="313" y="116" width="12" height="12"/>
// CHECK-NEXT:    <text x="329" y="126">W backward weight</text>
// CHECK-NEXT:    <rect class="backward" x="469" y="116" width="12" height="12"/>
// CHECK-NEXT:    <text x="485" y="126">BW fused backward</text>
// CHECK-NEXT:  </g>
// CHECK-NEXT:  </svg>
pp.schedule @split "zb-h1" for @train_step microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward_input stage 0 mb 0
    pp.compute backward_weight stage 0 mb 0
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.optimizer_step stage 1
  }
}

// -----

// A rank that runs two stages labels its boxes "stage.mb", and the boxes
// widen to 28px to fit them; the title escapes what XML reserves.

// CHECK-LABEL: <svg
// CHECK:       <text class="title" x="64" y="16">pp.schedule @v&lt;&amp;&gt; &quot;zbv&quot;: 2 ranks, 1 micro-batch, makespan 9 (unit costs)</text>
// CHECK:       <g class="rank" id="rank0">
// CHECK-NEXT:    <text x="4" y="64">rank 0</text>
// CHECK-NEXT:    <rect class="forward" x="64" y="48" width="28" height="24"><title>F stage 0 mb 0, 0 to 1</title></rect>
// CHECK-NEXT:    <text class="box" x="78" y="64">0.0</text>
// CHECK-NEXT:    <rect class="forward" x="148" y="48" width="28" height="24"><title>F stage 3 mb 0, 3 to 4</title></rect>
// CHECK-NEXT:    <text class="box" x="162" y="64">3.0</text>
// CHECK:       <g class="rank" id="rank1">
// CHECK-NEXT:    <text x="4" y="94">rank 1</text>
// CHECK-NEXT:    <rect class="forward" x="92" y="78" width="28" height="24"><title>F stage 1 mb 0, 1 to 2</title></rect>
// CHECK-NEXT:    <text class="box" x="106" y="94">1.0</text>
// CHECK-NEXT:    <rect class="forward" x="120" y="78" width="28" height="24"><title>F stage 2 mb 0, 2 to 3</title></rect>
// CHECK-NEXT:    <text class="box" x="134" y="94">2.0</text>
pp.schedule @"v<&>" "zbv" for @f microbatches 1 stage_rank [0, 1, 1, 0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv activation stage 3 mb 0 from 1
    pp.compute forward stage 3 mb 0
    pp.compute backward_input stage 3 mb 0
    pp.send gradient stage 3 mb 0 to 1
    pp.compute backward_weight stage 3 mb 0
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward_input stage 0 mb 0
    pp.compute backward_weight stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute forward stage 2 mb 0
    pp.send activation stage 2 mb 0 to 0
    pp.recv gradient stage 2 mb 0 from 0
    pp.compute backward_input stage 2 mb 0
    pp.compute backward_input stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward_weight stage 2 mb 0
    pp.compute backward_weight stage 1 mb 0
  }
}

// -----

// A schedule without a timeline: the ranks wait for each other.
// CHECK-NOT:  <svg
// expected-note @below {{while simulating this schedule for its timeline}}
pp.schedule @deadlock "1f1b" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @below {{deadlock: rank 0 waits at this 'pp.recv' for rank 1, which waits for rank 0}}
    pp.recv gradient stage 0 mb 0 from 1
    pp.send activation stage 0 mb 0 to 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    // expected-note @below {{rank 1 waits here for rank 0}}
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
  }
}

// The 4 x 8 1f1b schedule: 33 units wide, four rows of 8 F's and 8 BW's;
// rank 3 starts at unit 3 and runs F BW pairs without a gap.
// 1F1B:      <svg xmlns="http://www.w3.org/2000/svg" width="872" height="200"
// 1F1B:      makespan 33 (unit costs)</text>
// 1F1B:      <text class="tick" x="832" y="37" stroke="none">32</text>
// 1F1B-NEXT: </g>
// 1F1B-COUNT-16: <rect class="{{forward|backward}}" x="{{[0-9]+}}" y="48"
// 1F1B-NOT:  y="48"
// 1F1B:      <g class="rank" id="rank3">
// 1F1B-NEXT: <text x="4" y="154">rank 3</text>
// 1F1B-NEXT: <rect class="forward" x="136" y="138" width="24" height="24"><title>F stage 3 mb 0, 3 to 4</title></rect>
// 1F1B-NEXT: <text class="box" x="148" y="154">0</text>
// 1F1B-NEXT: <rect class="backward" x="160" y="138" width="48" height="24"><title>BW stage 3 mb 0, 4 to 6</title></rect>
// 1F1B-NEXT: <text class="box" x="184" y="154">0</text>
// 1F1B-NEXT: <rect class="forward" x="208" y="138" width="24" height="24"><title>F stage 3 mb 1, 6 to 7</title></rect>
// 1F1B:      <rect class="backward" x="664" y="138" width="48" height="24"><title>BW stage 3 mb 7, 25 to 27</title></rect>
// 1F1B-NEXT: <text class="box" x="688" y="154">7</text>
// 1F1B-NEXT: </g>
// 1F1B-NEXT: <g class="legend">
// 1F1B-COUNT-4: <rect class
// 1F1B:      </svg>
// 1F1B-NOT:  {{.}}
