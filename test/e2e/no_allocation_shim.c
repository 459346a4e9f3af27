/* no_allocation_shim.c - counts a process's heap allocations (LD_PRELOAD).
 *
 * Wraps glibc's malloc family and counts the calls made between MPI_Init
 * and MPI_Finalize (through MPI's profiling interface), which excludes
 * MPI's own start-up and shutdown, whose allocations vary from run to run.
 * At exit it appends "<pid> <count>" to the file named by
 * PP_MALLOC_COUNT_FILE, so that a test can compare the allocations of runs
 * of different lengths (test/e2e/no_allocation.py).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_long allocations;
static atomic_int counting;

static void countAllocation(void) {
  if (atomic_load(&counting))
    atomic_fetch_add(&allocations, 1);
}

int PMPI_Init(int *argc, char ***argv);
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int PMPI_Finalize(void);

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  atomic_store(&counting, 1);
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  atomic_store(&counting, 1);
  return rc;
}

int MPI_Finalize(void) {
  atomic_store(&counting, 0);
  return PMPI_Finalize();
}

void *malloc(size_t size) {
  countAllocation();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  countAllocation();
  return __libc_calloc(count, size);
}

void *realloc(void *ptr, size_t size) {
  countAllocation();
  return __libc_realloc(ptr, size);
}

void *memalign(size_t alignment, size_t size) {
  countAllocation();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  return memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  void *ptr = memalign(alignment, size);
  if (!ptr)
    return ENOMEM;
  *out = ptr;
  return 0;
}

__attribute__((destructor)) static void reportAllocations(void) {
  long count = atomic_load(&allocations);
  const char *path = getenv("PP_MALLOC_COUNT_FILE");
  if (!path)
    return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0)
    return;
  dprintf(fd, "%ld %ld\n", (long)getpid(), count);
  close(fd);
}
