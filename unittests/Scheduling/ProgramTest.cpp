//===- ProgramTest.cpp - verify on plain programs -------------------------===//
//
// `verify(Program)` without IR: a correct program passes, and each kind of
// mistake is reported, every instance of it, at the action or rank it is
// about.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/Program.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

using Kind = TimedAction::Kind;

ProgramAction compute(Phase phase, int64_t stage, int64_t mb) {
  ProgramAction action;
  action.phase = phase;
  action.stage = stage;
  action.mb = mb;
  return action;
}

ProgramAction transfer(Kind kind, TransferKind what, int64_t stage, int64_t mb,
                       int64_t peer) {
  ProgramAction action;
  action.kind = kind;
  action.transfer = what;
  action.stage = stage;
  action.mb = mb;
  action.peer = peer;
  return action;
}

/// Two stages on two ranks, one micro-batch, fused backwards, with its
/// transfers: a correct program.
Program getTwoStages() {
  Program program;
  program.numStages = 2;
  program.numMicrobatches = 1;
  program.stageRank = {0, 1};
  program.ranks = {{compute(Phase::forward, 0, 0),
                    transfer(Kind::send, TransferKind::activation, 0, 0, 1),
                    transfer(Kind::recv, TransferKind::gradient, 0, 0, 1),
                    compute(Phase::backward, 0, 0)},
                   {transfer(Kind::recv, TransferKind::activation, 1, 0, 0),
                    compute(Phase::forward, 1, 0),
                    compute(Phase::backward, 1, 0),
                    transfer(Kind::send, TransferKind::gradient, 1, 0, 0)}};
  return program;
}

/// The messages of `violations`, in order.
std::vector<std::string> messages(const std::vector<Violation> &violations) {
  std::vector<std::string> result;
  for (const Violation &violation : violations)
    result.push_back(violation.message);
  return result;
}

TEST(ProgramVerify, AcceptsCorrectProgram) {
  EXPECT_TRUE(verify(getTwoStages()).empty());
  Program rendezvous = getTwoStages();
  rendezvous.semantics = TransferSemantics::rendezvous;
  rendezvous.memoryCap = {1.0, 1.0};
  EXPECT_TRUE(verify(rendezvous).empty());
}

TEST(ProgramVerify, ReportsEveryViolation) {
  // Rank 0 runs its forward twice; rank 1 lacks its forward.
  Program program = getTwoStages();
  program.ranks[0].insert(program.ranks[0].begin() + 1,
                          compute(Phase::forward, 0, 0));
  program.ranks[1].erase(program.ranks[1].begin() + 1);
  std::vector<Violation> violations = verify(program);
  EXPECT_EQ(
      messages(violations),
      (std::vector<std::string>{"duplicate forward of stage 0 micro-batch 0",
                                "missing forward of stage 1 micro-batch 0"}));
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].site, (ProgramSite{0, 1}));
  ASSERT_EQ(violations[0].notes.size(), 1u);
  EXPECT_EQ(violations[0].notes[0].site, (ProgramSite{0, 0}));
  // A missing action is reported at its stage's rank.
  EXPECT_EQ(violations[1].site, (ProgramSite{1, -1}));
  EXPECT_FALSE(violations[1].aboutOp);
}

TEST(ProgramVerify, RejectsActionOffItsRank) {
  Program program = getTwoStages();
  program.ranks[1].push_back(compute(Phase::forward, 0, 0));
  std::vector<Violation> violations = verify(program);
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations[0].message, "forward of stage 0 micro-batch 0 is on "
                                   "rank 1, but stage 0 is placed on rank 0");
  EXPECT_EQ(violations[0].site, (ProgramSite{1, 4}));
}

TEST(ProgramVerify, RejectsWrongPeerAndUnmatchedTransfer) {
  Program program = getTwoStages();
  program.ranks[0][1].peer = 0; // the activation goes to rank 0 itself
  program.ranks[1].pop_back();  // the gradient is never sent
  EXPECT_EQ(messages(verify(program)),
            (std::vector<std::string>{
                "activation send of stage 0 micro-batch 0 goes to rank 0, but "
                "its consumer stage 1 is on rank 1"}));
  program.ranks[0][1].peer = 1;
  EXPECT_EQ(messages(verify(program)),
            (std::vector<std::string>{
                "gradient recv of stage 0 micro-batch 0 has no matching "
                "'pp.send gradient stage 1 mb 0 to 0' on rank 1"}));
}

TEST(ProgramVerify, RejectsComputeBeforeItsInput) {
  // Rank 1 runs its forward before it receives the activation.
  Program program = getTwoStages();
  std::swap(program.ranks[1][0], program.ranks[1][1]);
  std::vector<Violation> violations = verify(program);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].message,
            "forward of stage 1 micro-batch 0 needs its input from rank 0, "
            "but no 'pp.recv activation' precedes it");
  EXPECT_EQ(violations[0].site, (ProgramSite{1, 0}));
  ASSERT_EQ(violations[0].notes.size(), 1u);
  EXPECT_EQ(violations[0].notes[0].site, (ProgramSite{1, 1}));
}

TEST(ProgramVerify, RejectsDeadlock) {
  // Rank 0 waits for the gradient before it sends the activation.
  Program program = getTwoStages();
  std::swap(program.ranks[0][1], program.ranks[0][2]);
  std::vector<Violation> violations = verify(program);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].message, "deadlock: rank 0 waits at this 'pp.recv' "
                                   "for rank 1, which waits for rank 0");
  EXPECT_EQ(violations[0].site, (ProgramSite{0, 1}));
  EXPECT_FALSE(violations[0].aboutOp);
  ASSERT_EQ(violations[0].notes.size(), 1u);
  EXPECT_EQ(violations[0].notes[0].message, "rank 1 waits here for rank 0");
  EXPECT_EQ(violations[0].notes[0].site, (ProgramSite{1, 0}));
}

TEST(ProgramVerify, DeadlockAtSendToFinishedRank) {
  // Under rendezvous semantics rank 0's send waits for a receive rank 1,
  // which has finished, never reaches.
  ScheduleTiming timing(2, 1);
  timing.setActions({transfer(Kind::send, TransferKind::activation, 0, 0, 1)},
                    {0, 1, 1});
  ASSERT_TRUE(failed(timing.run(ActionCosts(StageCosts::getUnit(2)),
                                TransferSemantics::rendezvous)));
  Violation deadlock = getDeadlock(timing, {ProgramSite{0, 0}});
  EXPECT_EQ(deadlock.message,
            "deadlock: rank 0 waits at this 'pp.send' for rank 1");
  EXPECT_EQ(deadlock.site, (ProgramSite{0, 0}));
  EXPECT_TRUE(deadlock.notes.empty());
}

TEST(ProgramVerify, RejectsMemoryOverCap) {
  // Rank 0 holds one unit of activation after its forward.
  Program program = getTwoStages();
  program.memoryCap = {0.5, 1.0};
  std::vector<Violation> violations = verify(program);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].message,
            "leaves rank 0 holding 1 units of activation memory, above the "
            "schedule's memory_cap of 0.5");
  EXPECT_EQ(violations[0].site, (ProgramSite{0, 0}));
  // What a rank holds throughout counts against its cap too; a rank that
  // holds more than its cap before any activation is reported at the rank.
  program.memoryCap = {2.0, 2.0};
  program.staticMemory = {1.5, 3.0};
  program.ranks[1] = {};
  violations = verify(program);
  ASSERT_GE(violations.size(), 2u);
  EXPECT_EQ(violations.end()[-2].message,
            "leaves rank 0 holding 1 units of activation memory beside 1.5 of "
            "weights, gradients and optimizer state, above the schedule's "
            "memory_cap of 2");
  EXPECT_EQ(violations.back().site, (ProgramSite{1, -1}));
  EXPECT_EQ(violations.back().message,
            "holds 3 bytes of weights, gradients and optimizer state on rank "
            "1, above the schedule's memory_cap of 2");
}

TEST(ProgramVerify, RejectsCollectivesOutOfPlace) {
  // Two replicas: every stage needs an all-reduce after its backwards;
  // rank 0 reduces before its backward and rank 1 has none.
  Program program = getTwoStages();
  program.numReplicas = 2;
  ProgramAction reduce;
  reduce.kind = Kind::allReduce;
  reduce.stage = 0;
  program.ranks[0].insert(program.ranks[0].begin() + 1, reduce);
  EXPECT_EQ(messages(verify(program)),
            (std::vector<std::string>{
                "all_reduce of stage 0 runs before the backward of stage 0 "
                "micro-batch 0 whose gradient it reduces",
                "missing all_reduce of stage 1: the schedule runs as 2 "
                "data-parallel replicas"}));
}

TEST(ProgramVerify, RejectsSlicesOutOfOrder) {
  // Two slices per micro-batch on one stage: slice 1's forward before
  // slice 0's.
  Program program;
  program.numStages = 1;
  program.numMicrobatches = 2;
  program.numSlices = 2;
  program.stageRank = {0};
  program.ranks = {
      {compute(Phase::forward, 0, 1), compute(Phase::forward, 0, 0),
       compute(Phase::backward, 0, 1), compute(Phase::backward, 0, 0)}};
  EXPECT_EQ(messages(verify(program)),
            (std::vector<std::string>{
                "forward of stage 0 mb 1 (micro-batch 0 slice 1) runs before "
                "the forward of stage 0 mb 0 (micro-batch 0 slice 0), whose "
                "keys and values its attention reads"}));
}

} // namespace
