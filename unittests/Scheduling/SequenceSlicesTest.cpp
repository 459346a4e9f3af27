//===- SequenceSlicesTest.cpp - slice boundaries of a sequence ------------===//
//
// Uniform bounds, and balanced bounds against brute force over every cut
// of short sequences: their largest slice cost is the least possible.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/SequenceSlices.h"

#include "llvm/ADT/ArrayRef.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <functional>
#include <limits>

using namespace mlir::pp::sched;

namespace {

double largestSliceCost(llvm::ArrayRef<int64_t> bounds,
                        const SequenceCost &cost) {
  double largest = 0;
  for (size_t j = 0; j + 1 < bounds.size(); ++j)
    largest = std::max(largest, cost.of(bounds[j], bounds[j + 1]));
  return largest;
}

/// The least largest slice cost over every cut of [0, length) into
/// `slices` non-empty slices.
double bruteForce(int64_t length, int64_t slices, const SequenceCost &cost) {
  double best = std::numeric_limits<double>::infinity();
  llvm::SmallVector<int64_t> bounds = {0};
  std::function<void()> extend = [&] {
    int64_t j = bounds.size() - 1;
    if (j + 1 == slices) {
      bounds.push_back(length);
      best = std::min(best, largestSliceCost(bounds, cost));
      bounds.pop_back();
      return;
    }
    for (int64_t b = bounds.back() + 1; b <= length - (slices - 1 - j); ++b) {
      bounds.push_back(b);
      extend();
      bounds.pop_back();
    }
  };
  extend();
  return best;
}

TEST(SequenceSlicesTest, UniformBounds) {
  EXPECT_EQ(getUniformSliceBounds(8, 2), (llvm::SmallVector<int64_t>{0, 4, 8}));
  EXPECT_EQ(getUniformSliceBounds(10, 3),
            (llvm::SmallVector<int64_t>{0, 3, 6, 10}));
  EXPECT_EQ(getUniformSliceBounds(5, 1), (llvm::SmallVector<int64_t>{0, 5}));
}

TEST(SequenceSlicesTest, BalancedIsUniformWithoutAttention) {
  SequenceCost tokens{1.0, 0.0};
  EXPECT_EQ(getBalancedSliceBounds(16, 4, tokens),
            (llvm::SmallVector<int64_t>{0, 4, 8, 12, 16}));
}

TEST(SequenceSlicesTest, BalancedShortensLaterSlicesUnderAttention) {
  SequenceCost attention{0.0, 1.0};
  llvm::SmallVector<int64_t> bounds = getBalancedSliceBounds(32, 4, attention);
  for (size_t j = 1; j + 1 < bounds.size(); ++j)
    EXPECT_LE(bounds[j + 1] - bounds[j], bounds[j] - bounds[j - 1]);
  EXPECT_GT(bounds[1] - bounds[0], bounds[4] - bounds[3]);
}

TEST(SequenceSlicesTest, BalancedEqualsBruteForce) {
  for (double perToken : {0.0, 0.5, 3.0})
    for (double perPair : {0.0, 0.25, 1.0})
      for (int64_t length = 1; length <= 12; ++length)
        for (int64_t slices = 1; slices <= std::min<int64_t>(length, 4);
             ++slices) {
          if (perToken == 0 && perPair == 0)
            continue;
          SequenceCost cost{perToken, perPair};
          llvm::SmallVector<int64_t> bounds =
              getBalancedSliceBounds(length, slices, cost);
          ASSERT_EQ(bounds.size(), size_t(slices + 1));
          EXPECT_EQ(bounds.front(), 0);
          EXPECT_EQ(bounds.back(), length);
          for (size_t j = 0; j + 1 < bounds.size(); ++j)
            EXPECT_LT(bounds[j], bounds[j + 1]);
          EXPECT_NEAR(largestSliceCost(bounds, cost),
                      bruteForce(length, slices, cost), 1e-9)
              << "length " << length << " slices " << slices << " cost "
              << perToken << " + " << perPair << " b";
        }
}

} // namespace
