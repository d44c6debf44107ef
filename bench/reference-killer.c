/*
 * The physical floor of a reaction: a minimal killer with no JavaScript, no engine and no API.
 * It registers the same cgroup v1 memory threshold the agent's notifier registers (an eventfd on
 * the node cgroup's memory.usage_in_bytes through cgroup.event_control), waits in one epoll set
 * (the eventfd and stdin, as the agent's one epoll set holds its eventfds and a wake-up eventfd),
 * and on the kernel's event confirms with one reading of the usage, reads the victim's
 * cgroup.procs and sends each process SIGKILL. bench/lib/reference-killer.ts builds it with
 * `cc -O2` at bench time and drives it; the reaction-latency and OOM-race parts run it alternately
 * with the agent, on a node of the same shape.
 *
 * Usage: reference-killer <node memory cgroup directory>
 * Commands (stdin, one per line):
 *   arm <usage bytes> <victim cgroup directory>   register the threshold; prints "armed <usage bytes now>"
 *   disarm                                         drop it (when the run ended some other way); prints "disarmed"
 * When armed and the usage is at or past the threshold after an event, it kills the victim's
 * processes and prints "killed <notified ns> <kill issued ns> <usage bytes at the kill> <processes>",
 * the times on CLOCK_MONOTONIC (the clock of process.hrtime), then waits for the next command.
 * An event whose usage is below the threshold (the kernel signals crossings both ways) is ignored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define LINE_BYTES 4096
#define PROCS_BYTES 65536

static char line[LINE_BYTES];
static size_t line_length = 0;
static char procs[PROCS_BYTES];

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void say(const char *text) {
  size_t length = strlen(text);
  while (length > 0) {
    ssize_t written = write(1, text, length);
    if (written < 0) {
      if (errno == EINTR) continue;
      exit(1);
    }
    text += written;
    length -= (size_t)written;
  }
}

static long long read_usage(int usage_fd) {
  char text[64];
  ssize_t n = pread(usage_fd, text, sizeof text - 1, 0);
  if (n <= 0) return -1;
  text[n] = '\0';
  return atoll(text);
}

/* Reads one command line from stdin (non-blocking); 1 when a whole line is in `line`, 0 when not yet, -1 at the end. */
static int read_command(void) {
  for (;;) {
    char *newline = memchr(line, '\n', line_length);
    if (newline != NULL) {
      *newline = '\0';
      return 1;
    }
    if (line_length == LINE_BYTES - 1) return -1;
    ssize_t n = read(0, line + line_length, LINE_BYTES - 1 - line_length);
    if (n == 0) return -1;
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    line_length += (size_t)n;
  }
}

static void consume_command(void) {
  size_t used = strlen(line) + 1;
  memmove(line, line + used, line_length - used);
  line_length -= used;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: reference-killer <node memory cgroup directory>\n");
    return 2;
  }
  char path[LINE_BYTES];
  snprintf(path, sizeof path, "%s/memory.usage_in_bytes", argv[1]);
  int usage_fd = open(path, O_RDONLY | O_CLOEXEC);
  snprintf(path, sizeof path, "%s/cgroup.event_control", argv[1]);
  int control_fd = open(path, O_WRONLY | O_CLOEXEC);
  if (usage_fd < 0 || control_fd < 0) {
    perror(argv[1]);
    return 1;
  }
  fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event input = {.events = EPOLLIN, .data.fd = 0};
  if (epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, 0, &input) != 0) {
    perror("epoll");
    return 1;
  }

  int event_fd = -1;
  long long threshold_bytes = 0;
  char victim_procs[LINE_BYTES + 16] = "";
  for (;;) {
    int command;
    while ((command = read_command()) == 1) {
      if (strncmp(line, "arm ", 4) == 0) {
        char victim[LINE_BYTES - 64];
        if (event_fd >= 0 || sscanf(line + 4, "%lld %4000s", &threshold_bytes, victim) != 2) {
          fprintf(stderr, "reference-killer: bad or repeated arm: %s\n", line);
          return 2;
        }
        snprintf(victim_procs, sizeof victim_procs, "%s/cgroup.procs", victim);
        event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        char registration[128];
        int length = snprintf(registration, sizeof registration, "%d %d %lld", event_fd, usage_fd, threshold_bytes);
        struct epoll_event wake = {.events = EPOLLIN, .data.fd = event_fd};
        if (event_fd < 0 || write(control_fd, registration, (size_t)length) != length || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event_fd, &wake) != 0) {
          perror("reference-killer: registering the threshold");
          return 1;
        }
        char reply[64];
        snprintf(reply, sizeof reply, "armed %lld\n", read_usage(usage_fd));
        say(reply);
      } else if (strcmp(line, "disarm") == 0) {
        if (event_fd >= 0) close(event_fd);
        event_fd = -1;
        say("disarmed\n");
      }
      consume_command();
    }
    if (command < 0) return 0;

    struct epoll_event events[2];
    int ready = epoll_wait(epoll_fd, events, 2, -1);
    long long notified_ns = now_ns();
    if (ready < 0) {
      if (errno == EINTR) continue;
      perror("epoll_wait");
      return 1;
    }
    for (int i = 0; i < ready; i++) {
      if (events[i].data.fd != event_fd || event_fd < 0) continue;
      unsigned long long counter;
      if (read(event_fd, &counter, sizeof counter) != sizeof counter) continue;
      /* The one reading that confirms the crossing: the threshold fires both ways. */
      long long usage_bytes = read_usage(usage_fd);
      if (usage_bytes < threshold_bytes) continue;
      /* Noted where the agent's bench hook notes its local termination: as it is called, before cgroup.procs is read. */
      long long issued_ns = now_ns();
      int procs_fd = open(victim_procs, O_RDONLY | O_CLOEXEC);
      ssize_t n = procs_fd < 0 ? -1 : read(procs_fd, procs, sizeof procs - 1);
      if (procs_fd >= 0) close(procs_fd);
      procs[n < 0 ? 0 : n] = '\0';
      int killed = 0;
      for (char *cursor = procs; *cursor != '\0';) {
        char *end;
        long pid = strtol(cursor, &end, 10);
        if (end == cursor) break;
        if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0) killed++;
        cursor = end;
        while (*cursor == '\n') cursor++;
      }
      close(event_fd);
      event_fd = -1;
      char reply[160];
      snprintf(reply, sizeof reply, "killed %lld %lld %lld %d\n", notified_ns, issued_ns, usage_bytes, killed);
      say(reply);
    }
  }
}
