/* The files a run writes (--save, --checkpoint, --metrics, --profile):
   proven writable before the first step, and a place for trained state
   when writing it fails after the last. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver/driver.h"
#include "driver/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The magic numbers of pseudo file systems (linux/magic.h), whose files
   accept writes that store nothing. */
enum { PROC_MAGIC = 0x9fa0, SYSFS_MAGIC = 0x62656572 };

/* Whether the existing file `path` (`st`) can take an output; `err` says
   why not. */
static bool check_existing(const char *path, const struct stat *st, char *err,
                           size_t err_size) {
  if (!S_ISREG(st->st_mode)) {
    snprintf(err, err_size,
             "cannot write '%s': it is %s; outputs must be regular files", path,
             pprt_file_kind(st->st_mode));
    return false;
  }
  struct statfs fs;
  if (statfs(path, &fs) == 0 &&
      (fs.f_type == PROC_MAGIC || fs.f_type == SYSFS_MAGIC)) {
    snprintf(err, err_size,
             "cannot write '%s': it is a file of the kernel (/proc, /sys), "
             "not a regular file that keeps what is written",
             path);
    return false;
  }
  return true;
}

/* Creates `path` afresh and removes it again, or, if a regular file of
   that name is there (a temporary a killed run left), opens it for
   writing; `err` says why not, after "cannot write 'TARGET': ". */
static bool probe_create(const char *target, const char *path, char *err,
                         size_t err_size) {
  int fd =
      open(path, O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_NOCTTY, 0666);
  bool created = fd >= 0;
  struct stat st;
  if (fd < 0 && errno == EEXIST) {
    if (lstat(path, &st) == 0 && !check_existing(path, &st, err, err_size))
      return false;
    fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY);
  }
  if (fd < 0) {
    int e = errno;
    char created_as[4200] = "";
    if (path != target)
      snprintf(created_as, sizeof created_as, "cannot create '%s': ", path);
    snprintf(err, err_size, "cannot write '%s': %s%s%s", target, created_as,
             strerror(e),
             e == ENAMETOOLONG && path != target
                 ? " (with the suffix the writer adds, the name is longer "
                   "than the file system allows)"
                 : "");
    return false;
  }
  close(fd);
  if (created && unlink(path) != 0) {
    snprintf(err, err_size, "cannot remove '%s': %s", path, strerror(errno));
    return false;
  }
  return true;
}

bool pprt_check_output(const char *path, pprt_output_mode mode, char *err,
                       size_t err_size) {
  struct stat st;
  if (stat(path, &st) == 0) {
    if (!check_existing(path, &st, err, err_size))
      return false;
  } else if (errno != ENOENT) {
    snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
    return false;
  }
  if (mode == PPRT_OUTPUT_IN_PLACE && stat(path, &st) == 0) {
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
      snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
      return false;
    }
    close(fd);
    return true;
  }
  if (mode == PPRT_OUTPUT_IN_PLACE)
    return probe_create(path, path, err, err_size);
  /* The writer creates PATH.tmp beside PATH and renames it over PATH. */
  size_t n = strlen(path) + sizeof ".tmp";
  char *tmp = malloc(n);
  if (!tmp) {
    snprintf(err, err_size, "out of memory");
    return false;
  }
  snprintf(tmp, n, "%s.tmp", path);
  bool ok = probe_create(path, tmp, err, err_size);
  free(tmp);
  return ok;
}

bool pprt_check_checkpoint_dir(const char *dir, char *err, size_t err_size) {
  struct stat st;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    snprintf(err, err_size, "cannot create '%s': %s", dir, strerror(errno));
    return false;
  }
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(err, err_size, "'%s' is not a directory", dir);
    return false;
  }
  size_t n = strlen(dir) + sizeof "/" PPRT_CHECKPOINT_FILE;
  char *path = malloc(n);
  if (!path) {
    snprintf(err, err_size, "out of memory");
    return false;
  }
  snprintf(path, n, "%s/%s", dir, PPRT_CHECKPOINT_FILE);
  bool ok = pprt_check_output(path, PPRT_OUTPUT_REPLACED, err, err_size);
  free(path);
  return ok;
}

/* One file a run names: the option, and the path. */
typedef struct named_file {
  const char *option;
  char path[4200];
} named_file;

/* The directory of `path` whose last name starts at `base`, without
   trailing slashes: "." for a bare name, "/" for the root. */
static void parent(char *out, size_t size, const char *path, const char *base) {
  size_t len = (size_t)(base - path);
  while (len > 1 && path[len - 1] == '/')
    --len;
  snprintf(out, size, "%.*s", (int)len, len ? path : ".");
}

/* Whether `a` and `b` name one file: the same inode, or, where neither
   exists yet, the same name in the same directory. */
static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  bool has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
  if (has_a || has_b)
    return has_a && has_b && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  const char *base_a = strrchr(a, '/'), *base_b = strrchr(b, '/');
  base_a = base_a ? base_a + 1 : a;
  base_b = base_b ? base_b + 1 : b;
  if (strcmp(base_a, base_b) != 0)
    return false;
  char dir_a[4200], dir_b[4200];
  parent(dir_a, sizeof dir_a, a, base_a);
  parent(dir_b, sizeof dir_b, b, base_b);
  /* Each step drops a name, so this ends at "/" or ".", which exist. */
  return same_file(dir_a, dir_b);
}

static void add_file(named_file *files, int *n, const char *option,
                     const char *fmt, const char *path, const char *file) {
  if (!path || !*path)
    return;
  files[*n].option = option;
  snprintf(files[*n].path, sizeof files[*n].path, fmt, path, file);
  ++*n;
}

bool pprt_check_output_names(const pprt_driver_options *o, char *err,
                             size_t err_size) {
  enum { MAX_FILES = 80 };
  named_file *outputs = calloc(8, sizeof *outputs);
  named_file *inputs = calloc(MAX_FILES, sizeof *inputs);
  if (!outputs || !inputs) {
    free(outputs);
    free(inputs);
    snprintf(err, err_size, "out of memory");
    return false;
  }
  int num_outputs = 0, num_inputs = 0;
  add_file(outputs, &num_outputs, "--save", "%s%s", o->save_path, "");
  add_file(outputs, &num_outputs, "--profile", "%s%s", o->profile_path, "");
  add_file(outputs, &num_outputs, "--metrics", "%s%s", o->metrics_path, "");
  add_file(outputs, &num_outputs, "--checkpoint", "%s/%s", o->checkpoint_dir,
           PPRT_CHECKPOINT_FILE);
  add_file(inputs, &num_inputs, "the program", "%s%s", "/proc/self/exe", "");
  add_file(inputs, &num_inputs, "--init-weights", "%s%s", o->init_weights_path,
           "");
  char resume[4200];
  if (o->resume_dir)
    pprt_resume_path(o->resume_dir, resume, sizeof resume);
  add_file(inputs, &num_inputs, "--resume", "%s%s",
           o->resume_dir ? resume : NULL, "");
  add_file(inputs, &num_inputs, "--tokens", "%s%s", o->tokens_path, "");
  add_file(inputs, &num_inputs, "--corpus", "%s%s", o->corpus_path, "");
  add_file(inputs, &num_inputs, "--sample-lengths", "%s%s",
           o->sample_lengths_path, "");
  /* --data: .npy files and FILE.safetensors:NAME, comma-separated. */
  for (const char *at = o->data_spec; at && *at && num_inputs < MAX_FILES;) {
    const char *comma = strchr(at, ',');
    int len = (int)(comma ? (size_t)(comma - at) : strlen(at));
    char entry[4200];
    snprintf(entry, sizeof entry, "%.*s", len, at);
    char *colon = strstr(entry, ".safetensors:");
    if (colon)
      colon[strlen(".safetensors")] = '\0';
    add_file(inputs, &num_inputs, "--data", "%s%s", entry, "");
    at += len + (comma ? 1 : 0);
  }
  bool ok = true;
  for (int i = 0; i < num_outputs && ok; ++i) {
    const named_file *out = &outputs[i];
    for (int j = 0; j < i && ok; ++j)
      if (same_file(out->path, outputs[j].path)) {
        snprintf(err, err_size,
                 "%s and %s both name '%s'; give each output a file of its "
                 "own",
                 outputs[j].option, out->option, out->path);
        ok = false;
      }
    for (int j = 0; j < num_inputs && ok; ++j) {
      /* A run resumed from the directory it checkpoints into reads the
         checkpoint before it writes the next one. */
      if (strcmp(out->option, "--checkpoint") == 0 &&
          strcmp(inputs[j].option, "--resume") == 0)
        continue;
      if (!same_file(out->path, inputs[j].path))
        continue;
      if (j == 0)
        snprintf(err, err_size,
                 "%s: cannot write '%s': it is this job's program; give the "
                 "output a name of its own",
                 out->option, out->path);
      else
        snprintf(err, err_size,
                 "%s: cannot write '%s': it is the file %s reads; give the "
                 "output a name of its own",
                 out->option, out->path, inputs[j].option);
      ok = false;
    }
  }
  free(outputs);
  free(inputs);
  return ok;
}

/* Locks `lock_path` for the job's lifetime on behalf of output `target`
   (an exclusive flock; the file names the job's pid and host); false,
   with a line naming the job that holds it, if another does. `own` says
   what each job should have. */
static bool lock_output(const char *lock_path, const char *target,
                        const char *own, char *err, size_t err_size) {
  int fd = open(lock_path, O_RDWR | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                0666);
  struct stat st, at_path;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(err, err_size, "cannot lock '%s' for this job: %s", target,
             fd < 0 ? strerror(errno) : "its lock file is not a regular file");
    if (fd >= 0)
      close(fd);
    return false;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char holder[256] = "";
    ssize_t n = e == EWOULDBLOCK ? pread(fd, holder, sizeof holder - 1, 0) : -1;
    close(fd);
    holder[n > 0 ? n : 0] = '\0';
    holder[strcspn(holder, "\n")] = '\0';
    if (e != EWOULDBLOCK)
      snprintf(err, err_size, "cannot lock '%s' for this job: %s", target,
               strerror(e));
    else
      snprintf(err, err_size,
               "'%s' is in use by another job (%s); give each job %s of its "
               "own",
               target, holder[0] ? holder : "one that has not yet named itself",
               own);
    return false;
  }
  /* A job that ended removed the file after we opened it: lock the one at
     the path now. */
  if (stat(lock_path, &at_path) != 0 || at_path.st_ino != st.st_ino ||
      at_path.st_dev != st.st_dev) {
    close(fd);
    return lock_output(lock_path, target, own, err, err_size);
  }
  /* The lock lasts as long as the process: the descriptor stays open, and
     the kernel releases it however the job ends. */
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  char holder[320];
  int len = snprintf(holder, sizeof holder, "pid %ld on host %s\n",
                     (long)getpid(), host[0] ? host : "?");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, holder, (size_t)len, 0) != len) {
    snprintf(err, err_size, "cannot lock '%s' for this job: %s", target,
             strerror(errno));
    close(fd);
    return false;
  }
  return true;
}

bool pprt_lock_checkpoint_dir(const char *dir, char *err, size_t err_size) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, PPRT_CHECKPOINT_LOCK);
  return lock_output(path, dir, "a checkpoint directory", err, err_size);
}

/* --save's lock file, removed (still locked) as the job exits. */
static char save_lock[4200];

static void remove_save_lock(void) { unlink(save_lock); }

bool pprt_lock_save(const char *path, char *err, size_t err_size) {
  snprintf(save_lock, sizeof save_lock, "%s.lock", path);
  if (!lock_output(save_lock, path, "a --save file", err, err_size))
    return false;
  atexit(remove_save_lock);
  return true;
}

bool pprt_rescue_path(const char *path, int32_t attempt, char *out,
                      size_t size) {
  const char *dirs[2] = {".", getenv("TMPDIR")};
  if (!dirs[1] || !*dirs[1])
    dirs[1] = "/tmp";
  if (attempt < 0 || attempt >= 2)
    return false;
  const char *slash = strrchr(path, '/');
  const char *base = slash && slash[1] ? slash + 1 : path;
  /* Short enough, with ".tmp", for any file system's name limit. */
  snprintf(out, size, "%s/pprt-rescued-%ld-%.180s", dirs[attempt],
           (long)getpid(), base);
  return true;
}

bool pprt_rescue_state(pprt_driver *d, pprt_state_writer write,
                       const char *option, const char *path, int64_t step,
                       char *out, size_t size) {
  bool root = d->ctx->transport->world_rank == 0;
  for (int32_t attempt = 0; pprt_rescue_path(path, attempt, out, size);
       ++attempt) {
    char err[512] = "";
    bool ok = write(d, out, step, err, sizeof err);
    if (pprt_agree(d->ctx, ok, option, root ? out : path, err))
      return true;
  }
  if (root)
    fprintf(stderr,
            "pprt: rank 0: %s: no rescue place took what could not be "
            "written to '%s' either\n",
            option, path);
  fflush(stderr);
  return false;
}
