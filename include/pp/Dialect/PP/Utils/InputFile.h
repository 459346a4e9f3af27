//===- InputFile.h - read regular files without blocking --------*- C++ -*-===//
//
// llvm::MemoryBuffer::getFile opens a FIFO and waits for a writer, and reads
// a device such as /dev/zero until memory runs out. pp's readers of files a
// user names (cost files, device files, models) read through this instead:
// regular files only, opened without blocking, up to a size bound.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_UTILS_INPUTFILE_H
#define PP_DIALECT_PP_UTILS_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace mlir::pp {

/// The largest JSON file (cost profile, device file) pp reads: far above
/// what 65,536 stages need.
inline constexpr uint64_t kMaxJSONFileBytes = uint64_t(256) << 20;
/// The largest model file pp reads.
inline constexpr uint64_t kMaxModelFileBytes = uint64_t(4) << 30;

/// Reads the regular file `path` whole (null-terminated), refusing a FIFO,
/// device, socket or directory without waiting on it, and a file of more
/// than `maxBytes`; the error says why, without the path.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(llvm::StringRef path, uint64_t maxBytes);

/// Reads standard input whole (null-terminated): a regular file, a pipe or
/// a terminal, up to `maxBytes`; a device such as /dev/zero, which would be
/// read until memory runs out, or a directory is refused at once.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readStandardInput(uint64_t maxBytes);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_UTILS_INPUTFILE_H
