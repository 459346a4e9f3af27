/* Unit test of the safetensors reader and writer (driver/safetensors.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver/input_file.h"
#include "driver/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* Writes two tensors and metadata, then reads them back. */
static void test_round_trip(const char *dir) {
  char path[4096], tmp[4200], err[256] = "";
  snprintf(path, sizeof path, "%s/round_trip.safetensors", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  float w[6] = {1, -2, 3.5f, -0.0f, 5, 6};
  float b[3] = {7, 8, 9};
  int64_t wdims[] = {2, 3}, bdims[] = {3};
  pprt_st_entry entries[] = {{"w\"0\\", "F32", 2, wdims},
                             {"b0", "F32", 1, bdims}};
  const char *keys[] = {"format", "step"}, *values[] = {"pt", "\"3\"\n"};
  pprt_st_writer *wr =
      pprt_st_writer_begin(path, entries, 2, keys, values, 2, err, sizeof err);
  CHECK(wr);
  if (!wr)
    return;
  CHECK(access(tmp, F_OK) == 0 && access(path, F_OK) != 0);
  CHECK(pprt_st_writer_data(wr, w, sizeof w, err, sizeof err));
  CHECK(pprt_st_writer_data(wr, b, sizeof b, err, sizeof err));
  CHECK(pprt_st_writer_commit(wr, err, sizeof err));
  CHECK(access(tmp, F_OK) != 0);

  pprt_safetensors st;
  bool ok = pprt_st_read(path, &st, err, sizeof err);
  CHECK(ok);
  if (ok) {
    CHECK(st.num_tensors == 2);
    CHECK((st.size - 8 - st.data_size) % 8 == 0); /* padded header */
    const pprt_st_tensor *t = pprt_st_find(&st, "w\"0\\");
    CHECK(t && strcmp(t->dtype, "F32") == 0 && t->ndims == 2 &&
          t->dims[0] == 2 && t->dims[1] == 3 && t->end - t->begin == 24);
    CHECK(t && memcmp(st.data + t->begin, w, sizeof w) == 0);
    t = pprt_st_find(&st, "b0");
    CHECK(t && t->ndims == 1 && memcmp(st.data + t->begin, b, sizeof b) == 0);
    CHECK(!pprt_st_find(&st, "w0"));
    /* Metadata is kept, escapes decoded, and the data's checksum added. */
    CHECK(st.num_meta == 3);
    const char *sum = pprt_st_metadata(&st, "pprt_data_fnv1a");
    CHECK(sum && strlen(sum) == 16);
    const char *format = pprt_st_metadata(&st, "format");
    const char *step = pprt_st_metadata(&st, "step");
    CHECK(format && strcmp(format, "pt") == 0);
    CHECK(step && strcmp(step, "\"3\"\n") == 0);
    CHECK(!pprt_st_metadata(&st, "producer"));
  }
  pprt_st_free(&st);
  /* A flipped bit in the data is found when the file is read. */
  FILE *f = fopen(path, "r+b");
  CHECK(f && fseek(f, -1, SEEK_END) == 0 && fputc(0x55, f) != EOF &&
        fclose(f) == 0);
  CHECK(!pprt_st_read(path, &st, err, sizeof err));
  CHECK(strstr(err, "does not match the checksum its header records"));
  pprt_st_free(&st);
  unlink(path);
}

/* A writer of one f32 tensor "x" of `count` values, its first two written. */
static pprt_st_writer *begin_two_floats(const char *path, int64_t count,
                                        char *err, size_t err_size) {
  int64_t dims[] = {count};
  pprt_st_entry e = {"x", "F32", 1, dims};
  pprt_st_writer *wr =
      pprt_st_writer_begin(path, &e, 1, NULL, NULL, 0, err, err_size);
  CHECK(wr);
  float x[2] = {1, 2};
  if (wr)
    CHECK(pprt_st_writer_data(wr, x, sizeof x, err, err_size));
  return wr;
}

/* Committing fewer bytes than the header promises fails and leaves
   neither the file nor its temporary. */
static void test_short_write(const char *dir) {
  char path[4096], tmp[4200], err[256] = "";
  snprintf(path, sizeof path, "%s/short.safetensors", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  pprt_st_writer *wr = begin_two_floats(path, 4, err, sizeof err);
  if (!wr)
    return;
  CHECK(!pprt_st_writer_commit(wr, err, sizeof err));
  CHECK(strstr(err, "8 tensor bytes written, 16 expected"));
  CHECK(access(tmp, F_OK) != 0 && access(path, F_OK) != 0);
}

/* A FIFO put at the path while the file was written is not replaced:
   the commit fails, naming it, and removes the temporary. */
static void test_path_replaced(const char *dir) {
  char path[4096], tmp[4200], err[256] = "";
  snprintf(path, sizeof path, "%s/replaced.safetensors", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  unlink(path);
  pprt_st_writer *wr = begin_two_floats(path, 2, err, sizeof err);
  if (!wr)
    return;
  CHECK(mkfifo(path, 0600) == 0);
  CHECK(!pprt_st_writer_commit(wr, err, sizeof err));
  CHECK(strstr(err, "replaced.safetensors': it is a FIFO; outputs must be "
                    "regular files"));
  struct stat st;
  CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
  CHECK(access(tmp, F_OK) != 0);
  unlink(path);
}

/* A FIFO at the temporary's path (made after the run checked its
   outputs) fails the writer at once instead of blocking in open(); so do
   the other outputs' opens. */
static void test_fifo_temporary(const char *dir) {
  char path[4096], tmp[4200], err[4400] = "";
  snprintf(path, sizeof path, "%s/fifo-tmp.safetensors", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  unlink(tmp);
  CHECK(mkfifo(tmp, 0600) == 0);
  int64_t dims[] = {2};
  pprt_st_entry e = {"x", "F32", 1, dims};
  CHECK(!pprt_st_writer_begin(path, &e, 1, NULL, NULL, 0, err, sizeof err));
  CHECK(strstr(err, "fifo-tmp.safetensors.tmp': it is a FIFO; outputs must "
                    "be regular files"));
  CHECK(!pprt_open_output(tmp, err, sizeof err));
  CHECK(strstr(err, "it is a FIFO"));
  unlink(tmp);
  CHECK(!pprt_open_output("/dev/null", err, sizeof err));
  CHECK(strstr(err, "cannot write '/dev/null': it is a character device"));
  FILE *f = fopen(tmp, "w");
  CHECK(f && fputs("old contents", f) >= 0 && fclose(f) == 0);
  f = pprt_open_output(tmp, err, sizeof err);
  CHECK(f && fputs("new", f) >= 0 && fclose(f) == 0);
  struct stat st;
  CHECK(stat(tmp, &st) == 0 && st.st_size == 3);
  unlink(tmp);
}

/* Parses an image of `header` followed by `data_bytes` zero bytes;
   returns the error ("" if it parsed). */
static const char *parse(const char *header, size_t data_bytes) {
  static char err[256];
  size_t n = strlen(header);
  unsigned char *bytes = calloc(1, 8 + n + data_bytes);
  for (int i = 0; i < 8; ++i)
    bytes[i] = (unsigned char)((uint64_t)n >> (8 * i));
  memcpy(bytes + 8, header, n);
  pprt_safetensors st;
  err[0] = '\0';
  pprt_st_parse(bytes, 8 + n + data_bytes, &st, err, sizeof err);
  pprt_st_free(&st);
  return err;
}

static void expect_error(const char *header, size_t data_bytes,
                         const char *want) {
  const char *got = parse(header, data_bytes);
  if (!strstr(got, want) || (!*want && *got)) {
    fprintf(stderr, "header %s: error '%s', expected '%s'\n", header, got,
            want);
    ++failures;
  }
}

static void test_headers(void) {
  const char *x8 = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],"
                   "\"data_offsets\":[0,8]}}";
  expect_error(x8, 8, "");
  expect_error("{}", 0, "");
  expect_error("{\"__metadata__\":{\"a\":\"b\"}}  ", 0, "");
  expect_error("{\"__metadata__\":{\"a\":\"b\",\"a\":\"c\"}}", 0,
               "duplicate metadata key 'a'");
  expect_error("{\"\\u00e9\\ud83d\\ude00\":{\"dtype\":\"U8\",\"shape\":[],"
               "\"data_offsets\":[0,1]}}",
               1, "");
  expect_error(x8, 4, "outside the 4 data bytes");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[3],"
               "\"data_offsets\":[0,8]}}",
               12, "needs another size");
  expect_error("{\"x\":{\"dtype\":\"F33\",\"shape\":[2],"
               "\"data_offsets\":[0,8]}}",
               8, "unknown dtype 'F33'");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8,
               "needs dtype, shape and data_offsets");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}", 8,
               "duplicate field 'dtype'");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":"
               "[0,8]},\"y\":{\"dtype\":\"F32\",\"shape\":[2],"
               "\"data_offsets\":[4,12]}}",
               12, "tensors 'x' and 'y' overlap");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":"
               "[0,8]},\"x\":{\"dtype\":\"F32\",\"shape\":[2],"
               "\"data_offsets\":[8,16]}}",
               16, "duplicate tensor 'x'");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],"
               "\"data_offsets\":[0,8]}}",
               8, "expected a non-negative integer");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[2.0],"
               "\"data_offsets\":[0,8]}}",
               8, "expected an integer");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],"
               "\"data_offsets\":[0,8]}}",
               8, "integer too large");
  expect_error("{\"x\":1}", 0, "expected '{'");
  expect_error("{\"x\":{}", 0, "needs dtype");
  expect_error("{\"a\":{}} x", 0, "needs dtype");
  expect_error("{} x", 0, "trailing characters");
  expect_error("{\"a", 0, "unterminated string");
  expect_error("{\"\\q\":{}}", 0, "bad escape");
  expect_error("[]", 0, "expected '{'");
  expect_error("", 0, "expected '{'");
}

/* The tensors must tile the data section exactly: a header length 4 bytes
   short (one flipped bit in the writer's padding) shifts every tensor and
   leaves 4 bytes over; trailing bytes and gaps are refused too. */
static void test_tiling(void) {
  /* 54 bytes of JSON padded to 64, as the writer pads. */
  const char *x8 = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],"
                   "\"data_offsets\":[0,8]}}";
  char padded[72];
  snprintf(padded, sizeof padded, "%-64s", x8);
  size_t n = strlen(padded);
  CHECK(n % 8 == 0 && n - strlen(x8) >= 4);
  unsigned char *bytes = calloc(1, 8 + n + 8);
  bytes[0] = (unsigned char)(n - 4); /* 4 bytes short */
  memcpy(bytes + 8, padded, n);
  pprt_safetensors st;
  char err[256] = "";
  CHECK(!pprt_st_parse(bytes, 8 + n + 8, &st, err, sizeof err));
  CHECK(strstr(err, "the tensors cover 8 of the 12 data bytes: 4 bytes after "
                    "the last belong to no tensor"));
  pprt_st_free(&st);
  expect_error(x8, 9, "the tensors cover 8 of the 9 data bytes");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],"
               "\"data_offsets\":[4,12]}}",
               12, "data bytes [0, 4) before tensor 'x' belong to no tensor");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":"
               "[0,4]},\"y\":{\"dtype\":\"F32\",\"shape\":[1],"
               "\"data_offsets\":[8,12]}}",
               12, "data bytes [4, 8) before tensor 'y' belong to no tensor");
  expect_error("{\"x\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":"
               "[4,4]},\"y\":{\"dtype\":\"F32\",\"shape\":[1],"
               "\"data_offsets\":[0,4]}}",
               4, "");
  expect_error("{}", 1, "the tensors cover 0 of the 1 data bytes");
}

/* Only regular files are read, and a FIFO without a writer fails at once
   instead of blocking in open(). */
static void test_special_files(const char *dir) {
  char fifo[4096], err[256] = "";
  pprt_safetensors st;
  snprintf(fifo, sizeof fifo, "%s/fifo.safetensors", dir);
  unlink(fifo);
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK(!pprt_st_read(fifo, &st, err, sizeof err));
  CHECK(strstr(err, "cannot read: a FIFO; only regular files are read"));
  pprt_st_free(&st);
  unlink(fifo);
  CHECK(!pprt_st_read("/dev/zero", &st, err, sizeof err));
  CHECK(strstr(err, "cannot read: a character device"));
  pprt_st_free(&st);
  CHECK(!pprt_st_read(dir, &st, err, sizeof err));
  CHECK(strstr(err, "cannot read: a directory"));
  pprt_st_free(&st);
}

/* Header lengths that do not fit the file. */
static void test_lengths(void) {
  char err[256];
  pprt_safetensors st;
  unsigned char *bytes = calloc(1, 4);
  CHECK(!pprt_st_parse(bytes, 4, &st, err, sizeof err));
  CHECK(strstr(err, "fewer than the 8"));
  pprt_st_free(&st);
  bytes = calloc(1, 10);
  bytes[0] = 3;
  CHECK(!pprt_st_parse(bytes, 10, &st, err, sizeof err));
  CHECK(strstr(err, "header length 3 exceeds the file's 2 bytes"));
  pprt_st_free(&st);
  CHECK(!pprt_st_read("/nonexistent/x.safetensors", &st, err, sizeof err));
  CHECK(strstr(err, "cannot open: No such file or directory"));
  pprt_st_free(&st);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  test_round_trip(dir);
  test_short_write(dir);
  test_headers();
  test_lengths();
  test_tiling();
  test_special_files(dir);
  test_path_replaced(dir);
  test_fifo_temporary(dir);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("safetensors: all checks passed\n");
  return 0;
}
