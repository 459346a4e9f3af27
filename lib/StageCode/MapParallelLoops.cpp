//===- MapParallelLoops.cpp - parallel loops onto GPU blocks and threads --===//
//
// pp-map-parallel-loops: tiles each outermost scf.parallel into a grid of
// thread blocks along its contiguous dimension and maps it for
// convert-parallel-loops-to-gpu.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPMAPPARALLELLOOPS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

/// The largest grid extent along y and z.
constexpr int64_t kMaxGridYZ = 65535;

/// The constant trip count of dimension `dim` of `loop`, if it has one.
std::optional<int64_t> getTripCount(scf::ParallelOp loop, unsigned dim) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()[dim]);
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound()[dim]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[dim]);
  if (!lower || !upper || !step || *step <= 0)
    return std::nullopt;
  return llvm::divideCeil(std::max<int64_t>(*upper - *lower, 0), *step);
}

/// Threads per block along each dimension of `loop`: the innermost takes up
/// to `blockSize` (a power of two covering its extent), the next what is
/// left, every other one 1.
SmallVector<int64_t> getTileSizes(scf::ParallelOp loop, int64_t blockSize) {
  unsigned rank = loop.getNumLoops();
  SmallVector<int64_t> tiles(rank, 1);
  int64_t left = blockSize;
  for (unsigned i = 0; i < std::min(rank, 2u) && left > 1; ++i) {
    unsigned dim = rank - 1 - i;
    std::optional<int64_t> trips = getTripCount(loop, dim);
    int64_t wanted =
        trips ? llvm::PowerOf2Ceil(std::max<int64_t>(*trips, 1)) : left;
    tiles[dim] = std::min(wanted, left);
    left /= tiles[dim];
  }
  return tiles;
}

gpu::ParallelLoopDimMappingAttr getMapping(MLIRContext *context,
                                           gpu::Processor processor) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  return gpu::ParallelLoopDimMappingAttr::get(context, processor, identity,
                                              identity);
}

/// The grid mapping of the tile loop `grid` of `loop` tiled by `tiles`:
/// blockIdx.x along the innermost dimension, y and z along the next ones
/// where their extent is known to fit (`grid`'s steps no longer fold).
SmallVector<gpu::ParallelLoopDimMappingAttr>
getGridMapping(scf::ParallelOp grid, ArrayRef<std::optional<int64_t>> trips,
               ArrayRef<int64_t> tiles) {
  MLIRContext *context = grid.getContext();
  unsigned rank = grid.getNumLoops();
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping(
      rank, getMapping(context, gpu::Processor::Sequential));
  const gpu::Processor processors[] = {
      gpu::Processor::BlockX, gpu::Processor::BlockY, gpu::Processor::BlockZ};
  for (unsigned i = 0; i < std::min(rank, 3u); ++i) {
    unsigned dim = rank - 1 - i;
    if (i > 0 &&
        (!trips[dim] || llvm::divideCeil(*trips[dim], tiles[dim]) > kMaxGridYZ))
      continue;
    mapping[dim] = getMapping(context, processors[i]);
  }
  return mapping;
}

/// The thread mapping of the loop within a tile: threadIdx.x along the
/// innermost dimension, threadIdx.y along the next.
SmallVector<gpu::ParallelLoopDimMappingAttr>
getBlockMapping(scf::ParallelOp block) {
  MLIRContext *context = block.getContext();
  unsigned rank = block.getNumLoops();
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping(
      rank, getMapping(context, gpu::Processor::Sequential));
  mapping[rank - 1] = getMapping(context, gpu::Processor::ThreadX);
  if (rank > 1)
    mapping[rank - 2] = getMapping(context, gpu::Processor::ThreadY);
  return mapping;
}

/// Marks every parallel loop nested in `loop` sequential.
void mapNestedSequential(scf::ParallelOp loop) {
  loop.getBody()->walk([](scf::ParallelOp nested) {
    SmallVector<gpu::ParallelLoopDimMappingAttr> mapping(
        nested.getNumLoops(),
        getMapping(nested.getContext(), gpu::Processor::Sequential));
    (void)gpu::setMappingAttr(nested, mapping);
  });
}

struct MapParallelLoops : pp::impl::PPMapParallelLoopsBase<MapParallelLoops> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024 || !llvm::isPowerOf2_64(blockSize)) {
      getOperation().emitError()
          << "pp-map-parallel-loops: block-size must be a power of two "
             "between 1 and 1024, got "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          !loop->hasAttr(gpu::getMappingAttrName()))
        outermost.push_back(loop);
    });
    for (scf::ParallelOp loop : outermost) {
      mapNestedSequential(loop);
      SmallVector<std::optional<int64_t>> trips;
      for (unsigned dim = 0; dim < loop.getNumLoops(); ++dim)
        trips.push_back(getTripCount(loop, dim));
      SmallVector<int64_t> tiles = getTileSizes(loop, blockSize);
      auto [grid, block] =
          scf::tileParallelLoop(loop, tiles, /*noMinMaxBounds=*/true);
      if (failed(
              gpu::setMappingAttr(grid, getGridMapping(grid, trips, tiles))) ||
          failed(gpu::setMappingAttr(block, getBlockMapping(block))))
        return signalPassFailure();
    }
  }
};

} // namespace
