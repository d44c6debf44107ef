/*
 * The one program of the end-to-end tests' container images (see scripts/build-node-images.sh):
 * the pod sandbox's pause process and every test workload. Built with `cc -static`, so an image
 * is this file alone. Each mode prints what it did on stdout (the container's log).
 *
 *   kea-workload pause                         sleep until SIGTERM/SIGINT, reaping children
 *   kea-workload hold MIB                      touch MIB of anonymous memory, then sleep
 *   kea-workload leak MIB_PER_S [START [MAX]]  touch START MiB at once, then MIB_PER_S more each
 *                                              second (every page written) up to MAX MiB
 *   kea-workload forks PER_S MAX               fork PER_S sleeping children a second, up to MAX
 *   kea-workload fill FILE MIB_PER_S MAX_MIB [START_MIB]
 *                                              write START_MIB to FILE at once, then MIB_PER_S more
 *                                              each second up to MAX_MIB, then sleep
 *
 * As a container's PID 1 it would ignore SIGTERM without a handler, so it installs one and exits
 * at once, as a well-behaved main process does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024L * 1024L)
/* Work is done in ticks of 10 ms, so a rate is smooth at the scale of the agent's reactions. */
#define TICKS_PER_S 100L

static void on_terminate(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

static void install_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_terminate;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_child;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
}

static void sleep_forever(void) {
  for (;;) pause();
}

static long parse_long(const char *text, const char *what) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0) {
    fprintf(stderr, "kea-workload: %s must be a non-negative integer, got '%s'\n", what, text);
    exit(2);
  }
  return value;
}

/* Maps `bytes` of anonymous memory, populated (faster than a fault per page), and writes every
 * page, so all of it is charged to the cgroup at once. */
static int touch_anonymous(long bytes) {
  if (bytes <= 0) return 0;
  char *chunk = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (chunk == MAP_FAILED) return -1;
  long page = sysconf(_SC_PAGESIZE);
  for (long offset = 0; offset < bytes; offset += page) chunk[offset] = (char)0x5a;
  return 0;
}

/* Sleeps until the next tick of a schedule that started at `start` (absolute, so rates do not drift). */
static void wait_tick(const struct timespec *start, long tick) {
  struct timespec at = *start;
  long ns = (tick % TICKS_PER_S) * (1000000000L / TICKS_PER_S);
  at.tv_sec += tick / TICKS_PER_S;
  at.tv_nsec += ns;
  if (at.tv_nsec >= 1000000000L) {
    at.tv_sec++;
    at.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
  }
}

static int run_hold(long mib) {
  if (touch_anonymous(mib * MIB) != 0) {
    perror("kea-workload: mmap");
    return 1;
  }
  printf("holding %ld MiB\n", mib);
  fflush(stdout);
  sleep_forever();
  return 0;
}

static int run_leak(long mib_per_s, long start_mib, long max_mib) {
  if (touch_anonymous(start_mib * MIB) != 0) {
    perror("kea-workload: mmap");
    return 1;
  }
  printf("holding %ld MiB, leaking %ld MiB/s\n", start_mib, mib_per_s);
  fflush(stdout);
  long step = mib_per_s * MIB / TICKS_PER_S;
  long held = start_mib * MIB;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long tick = 1; max_mib <= 0 || held < max_mib * MIB; tick++) {
    wait_tick(&start, tick);
    long bytes = step;
    if (max_mib > 0 && held + bytes > max_mib * MIB) bytes = max_mib * MIB - held;
    if (touch_anonymous(bytes) != 0) {
      perror("kea-workload: mmap");
      break;
    }
    held += bytes;
    if (tick % TICKS_PER_S == 0) {
      printf("leaked to %ld MiB\n", held / MIB);
      fflush(stdout);
    }
  }
  printf("holding %ld MiB\n", held / MIB);
  fflush(stdout);
  sleep_forever();
  return 0;
}

static int run_forks(long per_s, long max) {
  printf("forking %ld children a second, up to %ld\n", per_s, max);
  fflush(stdout);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  long forked = 0;
  double due = 0;
  for (long tick = 1; forked < max; tick++) {
    wait_tick(&start, tick);
    due += (double)per_s / TICKS_PER_S;
    while (forked < max && due >= 1) {
      pid_t pid = fork();
      if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        sleep_forever();
      }
      if (pid < 0) {
        /* The pod's pids limit: keep trying, as a runaway program would. */
        if (tick % TICKS_PER_S == 0) printf("fork failed after %ld children: %s\n", forked, strerror(errno));
        break;
      }
      forked++;
      due -= 1;
    }
    if (tick % TICKS_PER_S == 0) {
      printf("%ld children\n", forked);
      fflush(stdout);
    }
  }
  printf("%ld children, holding\n", forked);
  fflush(stdout);
  sleep_forever();
  return 0;
}

static int run_fill(const char *path, long mib_per_s, long max_mib, long start_mib) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    perror("kea-workload: open");
    return 1;
  }
  static char block[1 << 16];
  memset(block, 0x5a, sizeof block);
  long step = mib_per_s * MIB / TICKS_PER_S;
  long written = 0;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  printf("filling %s with %ld MiB, then at %ld MiB/s up to %ld MiB\n", path, start_mib, mib_per_s, max_mib);
  fflush(stdout);
  for (long tick = 0; written < max_mib * MIB; tick++) {
    if (tick > 0) wait_tick(&start, tick);
    long target = tick == 0 ? start_mib * MIB : written + step;
    if (target > max_mib * MIB) target = max_mib * MIB;
    while (written < target) {
      long n = target - written < (long)sizeof block ? target - written : (long)sizeof block;
      ssize_t done = write(fd, block, (size_t)n);
      if (done < 0) {
        printf("write failed after %ld MiB: %s\n", written / MIB, strerror(errno));
        fflush(stdout);
        sleep_forever();
      }
      written += done;
    }
    if (tick > 0 && tick % TICKS_PER_S == 0) {
      printf("wrote %ld MiB\n", written / MIB);
      fflush(stdout);
    }
  }
  printf("wrote %ld MiB, holding\n", written / MIB);
  fflush(stdout);
  sleep_forever();
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: kea-workload pause | hold MIB | leak MIB_PER_S [START_MIB [MAX_MIB]] | forks PER_S MAX | fill FILE MIB_PER_S MAX_MIB [START_MIB]\n");
  return 2;
}

int main(int argc, char **argv) {
  install_handlers();
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) return usage();
  const char *mode = argv[1];
  if (strcmp(mode, "pause") == 0 && argc == 2) {
    sleep_forever();
  } else if (strcmp(mode, "hold") == 0 && argc == 3) {
    return run_hold(parse_long(argv[2], "MIB"));
  } else if (strcmp(mode, "leak") == 0 && argc >= 3 && argc <= 5) {
    return run_leak(parse_long(argv[2], "MIB_PER_S"), argc > 3 ? parse_long(argv[3], "START_MIB") : 0, argc > 4 ? parse_long(argv[4], "MAX_MIB") : 0);
  } else if (strcmp(mode, "forks") == 0 && argc == 4) {
    return run_forks(parse_long(argv[2], "PER_S"), parse_long(argv[3], "MAX"));
  } else if (strcmp(mode, "fill") == 0 && (argc == 5 || argc == 6)) {
    return run_fill(argv[2], parse_long(argv[3], "MIB_PER_S"), parse_long(argv[4], "MAX_MIB"), argc > 5 ? parse_long(argv[5], "START_MIB") : 0);
  }
  return usage();
}
