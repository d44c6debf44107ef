/*
 * The physical floor of one observe pass: the same system calls on the same files, in the same
 * order, as the agent's cgroup observer made in one recorded pass (bench/lib/reference-reader.ts
 * records them and builds this with `cc -O2` at bench time), with nothing else around them.
 *
 * Input (stdin): the number of passes, then one operation per line, "<op> <path>":
 *   P  pread at offset 0 of a file kept open (opened once, before the passes), until a short read
 *   L  fstat of a file or directory kept open (its link count)
 *   R  open, read to the end, close
 *   r  open, read until a short read (a file the kernel generates in one piece), close
 *   D  opendir, readdir to the end, closedir
 *   S  stat
 *   F  statfs
 * Output (stdout): one line per pass, its wall time in nanoseconds (CLOCK_MONOTONIC), then
 * "cpu <user+system ns over all passes>".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define MAX_OPS 200000
#define BUFFER_BYTES (64 * 1024)

struct op {
  char kind;
  char *path;
  int fd;
};

static struct op ops[MAX_OPS];
static char buffer[BUFFER_BYTES];

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long cpu_ns(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return ((long long)u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000LL + ((long long)u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000LL;
}

int main(void) {
  int passes = 0;
  if (scanf("%d\n", &passes) != 1 || passes <= 0) {
    fprintf(stderr, "reference-reader: the first line must be the number of passes\n");
    return 2;
  }
  int count = 0;
  char *line = NULL;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, stdin)) > 0) {
    if (line[length - 1] == '\n') line[--length] = '\0';
    if (length < 3 || line[1] != ' ') continue;
    if (count == MAX_OPS) {
      fprintf(stderr, "reference-reader: more than %d operations\n", MAX_OPS);
      return 2;
    }
    ops[count].kind = line[0];
    ops[count].path = strdup(line + 2);
    ops[count].fd = -1;
    if (line[0] == 'P' || line[0] == 'L') {
      ops[count].fd = open(ops[count].path, O_RDONLY | O_CLOEXEC);
      if (ops[count].fd < 0) {
        perror(ops[count].path);
        return 1;
      }
    }
    count++;
  }
  free(line);

  struct stat st;
  struct statfs sfs;
  long long cpu_start = cpu_ns();
  for (int pass = 0; pass < passes; pass++) {
    long long started = now_ns();
    for (int i = 0; i < count; i++) {
      struct op *o = &ops[i];
      switch (o->kind) {
        case 'P': {
          off_t offset = 0;
          ssize_t n;
          while ((n = pread(o->fd, buffer, BUFFER_BYTES, offset)) == BUFFER_BYTES) offset += n;
          break;
        }
        case 'L':
          fstat(o->fd, &st);
          break;
        case 'R':
        case 'r': {
          int fd = open(o->path, O_RDONLY | O_CLOEXEC);
          if (fd >= 0) {
            ssize_t n;
            while ((n = read(fd, buffer, BUFFER_BYTES)) > 0 && (o->kind == 'R' || n == BUFFER_BYTES)) {
            }
            close(fd);
          }
          break;
        }
        case 'D': {
          DIR *dir = opendir(o->path);
          if (dir != NULL) {
            while (readdir(dir) != NULL) {
            }
            closedir(dir);
          }
          break;
        }
        case 'S':
          stat(o->path, &st);
          break;
        case 'F':
          statfs(o->path, &sfs);
          break;
        default:
          break;
      }
    }
    printf("%lld\n", now_ns() - started);
  }
  printf("cpu %lld\n", cpu_ns() - cpu_start);
  return 0;
}
