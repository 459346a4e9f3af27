// With buffered (async) sends, 1F1B with each receive right before its
// consumer runs; with rendezvous transfers (NCCL send/recv), rank 0's second
// activation send waits for rank 1, which waits at its gradient send for
// rank 0: a deadlock that pp-verify-schedule{semantics=rendezvous} and
// pp-simulate report.
// RUN: pp-opt %s --pp-schedule="num-stages=2 num-microbatches=2" --pp-insert-transfers=semantics=async --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASYNC
// RUN: not pp-opt %s --pp-schedule="num-stages=2 num-microbatches=2 semantics=rendezvous" --pp-insert-transfers=semantics=async --pp-verify-schedule="semantics=rendezvous" 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: not pp-opt %s --pp-schedule="num-stages=2 num-microbatches=2 semantics=rendezvous" --pp-insert-transfers=semantics=async --pp-simulate="semantics=rendezvous" 2>&1 | FileCheck %s --check-prefix=SIM
// RUN: not pp-opt %s --pp-simulate="semantics=eventually" 2>&1 | FileCheck %s --check-prefix=BAD

// ASYNC: remark: makespan 9, bubble 33.3% (idle per rank: 3, 3), peak activation memory per rank: 2, 1

// VERIFY: error: loc("rank 0: forward stage 0 mb 1"): deadlock: rank 0 waits at this 'pp.send' for rank 1, which waits for rank 0
// VERIFY: "pp.send"() <{kind = #pp<transfer activation>, mb = 1 : i64, peer = 1 : i64, stage = 0 : i64}>
// VERIFY: note: loc("rank 1: backward stage 1 mb 0"): rank 1 waits here for rank 0
// VERIFY: note: the ranks wait for each other only with rendezvous transfers, where a send waits for its receive

// SIM: error: loc("rank 0: forward stage 0 mb 1"): deadlock: rank 0 waits at this 'pp.send' for rank 1, which waits for rank 0
// SIM: note: while simulating this schedule with rendezvous transfers

// BAD: for the --semantics option: Cannot find option named 'eventually'!
module {
}
