//===- pp-safetensors-fuzzer.cpp - fuzz the runtime's safetensors reader --===//
//
// Parses the input as a weights file (--init-weights, --resume); a file that
// parses must describe tensors inside its data, sized as their shapes,
// disjoint, and metadata keys that are unique.
//
//===----------------------------------------------------------------------===//

extern "C" {
#include "driver/safetensors.h"
}

#include <cstdio>
#include <cstdlib>
#include <cstring>

/// Ends the run with a message: libFuzzer saves the input as a crash.
[[noreturn]] static void finding(const char *message) {
  std::fprintf(stderr, "pp fuzz finding: %s\n", message);
  std::abort();
}

static void checkTensor(const pprt_safetensors &st, const pprt_st_tensor &t) {
  if (t.begin > t.end || t.end > st.data_size)
    finding("a tensor outside the data was read");
  unsigned __int128 bytes = pprt_st_dtype_size(t.dtype);
  for (int32_t d = 0; d < t.ndims; ++d)
    bytes *= static_cast<uint64_t>(t.dims[d]);
  if (bytes != t.end - t.begin)
    finding("a tensor whose bytes are not its shape's was read");
  if (pprt_st_find(&st, t.name) != &t)
    finding("a tensor name was read twice");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto *bytes = static_cast<unsigned char *>(std::malloc(size ? size : 1));
  std::memcpy(bytes, data, size);
  pprt_safetensors st;
  char err[512];
  if (pprt_st_parse(bytes, size, &st, err, sizeof err)) {
    for (int32_t i = 0; i < st.num_tensors; ++i) {
      checkTensor(st, st.tensors[i]);
      for (int32_t j = 0; j < i && st.num_tensors <= 64; ++j) {
        const pprt_st_tensor &a = st.tensors[i], &b = st.tensors[j];
        if (a.begin < a.end && b.begin < b.end && a.begin < b.end &&
            b.begin < a.end)
          finding("overlapping tensors were read");
      }
    }
    for (int32_t i = 0; i < st.num_meta; ++i)
      if (pprt_st_metadata(&st, st.meta_keys[i]) != st.meta_values[i])
        finding("a metadata key was read twice");
  } else if (!std::memchr(err, '\0', sizeof err) || !err[0]) {
    finding("a rejected file has no reason");
  }
  pprt_st_free(&st);
  return 0;
}
