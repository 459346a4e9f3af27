//===- InputFile.cpp - read regular files without blocking ----------------===//

#include "pp/Dialect/PP/Utils/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

static llvm::Error fileError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// What a file that is not a regular one is.
static const char *describeKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
pp::readRegularFile(llvm::StringRef path, uint64_t maxBytes) {
  llvm::SmallString<256> name(path);
  // O_NONBLOCK: opening a FIFO without a writer returns at once.
  int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return fileError(std::strerror(errno));
  struct stat st;
  llvm::Error error = llvm::Error::success();
  if (::fstat(fd, &st) != 0)
    error = fileError(std::strerror(errno));
  else if (!S_ISREG(st.st_mode))
    error = fileError(llvm::Twine("it is ") + describeKind(st.st_mode) +
                      "; only regular files are read");
  else if (uint64_t(st.st_size) > maxBytes)
    error = fileError(llvm::formatv("it has {0} bytes; at most {1} are read",
                                    uint64_t(st.st_size), maxBytes));
  else if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
    error = fileError(std::strerror(errno));
  if (error) {
    ::close(fd);
    return std::move(error);
  }
  // Exactly the size it had: a file that grows meanwhile is not read on.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getOpenFile(fd, path, uint64_t(st.st_size));
  ::close(fd);
  if (!buffer)
    return fileError(buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
pp::readStandardInput(uint64_t maxBytes) {
  struct stat st;
  if (::fstat(STDIN_FILENO, &st) != 0)
    return fileError(std::strerror(errno));
  bool stream = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
                (S_ISCHR(st.st_mode) && ::isatty(STDIN_FILENO));
  if (!S_ISREG(st.st_mode) && !stream)
    return fileError(llvm::Twine("it is ") + describeKind(st.st_mode) +
                     "; only regular files, pipes and terminals are read");
  if (S_ISREG(st.st_mode) && uint64_t(st.st_size) > maxBytes)
    return fileError(llvm::formatv("it has {0} bytes; at most {1} are read",
                                   uint64_t(st.st_size), maxBytes));
  // A pipe's size is known only at its end: stop once more than maxBytes
  // have come.
  llvm::SmallString<0> text;
  char chunk[1 << 16];
  while (text.size() <= maxBytes) {
    ssize_t got = ::read(STDIN_FILENO, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return fileError(std::strerror(errno));
    if (got == 0)
      return llvm::MemoryBuffer::getMemBufferCopy(text, "<stdin>");
    text.append(chunk, chunk + got);
  }
  return fileError(llvm::formatv(
      "it holds more than {0} bytes; at most {0} are read", maxBytes));
}
