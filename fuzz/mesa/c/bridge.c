/*
 * agxfuzz's Mesa bridge: a persistent process that runs Mesa's AGX backend
 * passes on one function per request, in a forked worker.
 *
 * Our own code, written against Mesa's headers. On start it prints
 * `agxfuzz-mesa-bridge 1 MESA_VERSION`. Then, per request on stdin:
 *
 *   request TIMEOUT_MS
 *   passes NAME...            (bridge pass names, see bridge_run_pass)
 *   shader ... (wire.c)
 *   end
 *
 * and on stdout one answer, always ended by `end`:
 *
 *   ok / shader ... / end                  the passes ran
 *   error REASON / end                     a malformed request (our bug)
 *   crash STATUS / | stderr line... / end  Mesa aborted (an assert: signal 6)
 *                                          or exited (agx_validate: exit 1)
 *   timeout / | stderr line... / end       the worker outran TIMEOUT_MS
 *
 * A forked worker reads the requests from stdin itself and writes each answer
 * to stdout in one write, request after request (its ralloc context freed and
 * the bridge's own state reset after each): no byte of a request or an answer
 * passes through the bridge process, which only waits for the worker to end.
 * A Mesa assert or hang costs one request and never the bridge: the worker
 * dies in the middle of a request (a hang: by the SIGALRM of its own timer),
 * the bridge sees that in the state the worker keeps in a page they share,
 * answers the request `crash` or `timeout` with Mesa's stderr (which the
 * worker keeps in a memory file, emptied at each request's start) and forks
 * the next worker, which reads the next request. A worker is also replaced
 * after WORKER_REQUESTS requests. The client sends one request at a time
 * (a worker that died took nothing of the next one with it). agx_validate
 * runs on the input and after every pre-RA pass, as Mesa runs it in debug
 * builds (never on allocated IR).
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "bridge.h"

#ifndef AGXFUZZ_MESA_VERSION
#define AGXFUZZ_MESA_VERSION "unknown"
#endif

/* Mesa defines this in agx_compile.c, which the bridge does not build */
int agx_compiler_debug = 0;

/* What `ra` measured, printed after the shader; 0 bound: not measured */
static unsigned bridge_demand, bridge_bound;

bool
bridge_run_pass(agx_context *ctx, const char *name, bool *liveness)
{
   if (!strcmp(name, "optimizer"))
      agx_optimizer(ctx);
   else if (!strcmp(name, "cse"))
      agx_opt_cse(ctx);
   else if (!strcmp(name, "dce"))
      agx_dce(ctx, true);
   else if (!strcmp(name, "dce-instructions"))
      agx_dce(ctx, false);
   else if (!strcmp(name, "lower-uniform-sources"))
      agx_lower_uniform_sources(ctx);
   else if (!strcmp(name, "schedule"))
      agx_pressure_schedule(ctx);
   else if (!strcmp(name, "ra")) {
      /* Mesa's allocation with its parallel copies and phis kept (copies.c),
       * and the demand it counted (demand.c), printed as a `demand` line */
      bridge_mesa_demand(ctx, &bridge_demand, &bridge_bound);
      bridge_ra_keeping_copies(ctx);
   }
   else if (!strcmp(name, "ra-direct"))
      agx_ra(ctx);
   else if (!strcmp(name, "lower-copies"))
      bridge_lower_copies(ctx);
   else if (!strcmp(name, "lower-pseudo"))
      agx_lower_pseudo(ctx);
   else if (!strcmp(name, "liveness")) {
      agx_compute_liveness(ctx);
      *liveness = true;
   } else if (!strcmp(name, "spin")) {
      /* A pass that never ends: how the tests show a hang costs one request */
      for (;;)
         pause();
   } else if (!strcmp(name, "validate"))
      agx_validate(ctx, "agxfuzz");
   else
      return false;
   return true;
}

#ifdef AGXFUZZ_COVERAGE
/* The gcov build (build_bridge(coverage=True), agxfuzz mesa coverage): a worker
 * never exits normally (it is killed with its bridge), so its counters are
 * written (merged into the .gcda files under GCOV_PREFIX) and cleared after
 * every request, and by a crash's signal before it ends the worker */
extern void __gcov_dump(void);
extern void __gcov_reset(void);

static void
bridge_coverage_dump(void)
{
   __gcov_dump();
   __gcov_reset();
}

static void
bridge_coverage_on_crash(int sig)
{
   __gcov_dump();
   signal(sig, SIG_DFL);
   raise(sig);
}
#endif

/* What a worker is doing, kept where the bridge reads it once the worker has
 * ended: its death in the middle of a request is that request's answer */
enum worker_state {
   WORKER_IDLE,    /* between requests, or reading one */
   WORKER_BUSY,    /* a request read whole: parsing, running, printing */
   WORKER_WRITING, /* writing an answer */
   WORKER_EOF,     /* stdin ended: the bridge ends too */
};

/* The bytes read from stdin and not yet consumed, in memory the bridge and
 * its workers share: a worker that dies takes nothing of the requests after
 * its own with it (the next worker reads on from `start`), even when a client
 * sends many at once. A request is consumed, `start` moved past it, just
 * before it is served. */
#define INPUT_BYTES (64u << 20)
static struct shared {
   volatile int state;
   size_t start, len;
   char data[];
} *shared;

/* Requests a worker serves before it is replaced: bounds what a request could
 * leave behind (a leak outside its ralloc context) for the ones after it */
#define WORKER_REQUESTS 256

static bool
write_all(int fd, const char *data, size_t len)
{
   while (len) {
      ssize_t n = write(fd, data, len);
      if (n < 0 && errno == EINTR)
         continue;
      if (n <= 0)
         return false;
      data += n;
      len -= n;
   }
   return true;
}

static void
set_timer(long ms)
{
   struct itimerval t = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
   setitimer(ITIMER_REAL, &t, NULL);
}

/* One request in the worker: parse, run, print the whole answer (`ok` and the
 * shader, or `error REASON`, then `end`) into memory, and write it at once.
 * A Mesa assert or agx_validate failure ends the worker instead, as does its
 * timer (SIGALRM) when the request outruns TIMEOUT_MS; the bridge answers for
 * it. The request's memory is freed before the answer is written, so a crash
 * while freeing it (a heap Mesa corrupted) is still this request's, never the
 * next one's. */
static void
serve_request(char **lines, unsigned nlines, long timeout_ms, int answer_fd,
              int err_fd)
{
   shared->state = WORKER_BUSY;
   /* Mesa's stderr is this request's only (the file is in append mode) */
   if (ftruncate(err_fd, 0) != 0)
      _exit(5);
   set_timer(timeout_ms);
   char *answer = NULL;
   size_t size = 0;
   FILE *out = open_memstream(&answer, &size);
   if (!out)
      _exit(6);
   const char *error = NULL;
   void *memctx = ralloc_context(NULL);
   bridge_demand = bridge_bound = 0;
   bridge_record_copies = false;
   agx_context *ctx = NULL;
   if (nlines < 1 || strncmp(lines[0], "passes", 6) != 0) {
      fprintf(out, "error expected a `passes` line\n");
      goto done;
   }
   ctx = bridge_read_shader(memctx, lines + 1, nlines - 1, &error);
   if (!ctx) {
      fprintf(out, "error %s\n", error);
      goto done;
   }

   /* Mesa validates pre-RA IR only: a machine-level input (register
    * destinations) is what agx_ra made, which agx_validate never sees */
   bool liveness = false, allocated = false;
   agx_foreach_instr_global(ctx, I) {
      agx_foreach_dest(I, d)
         allocated |= I->dest[d].type == AGX_INDEX_REGISTER;
   }
   if (!allocated)
      agx_validate(ctx, "IR translation");
   char *names = lines[0] + 6;
   for (char *save = NULL, *name = strtok_r(names, " ", &save); name;
        name = strtok_r(NULL, " ", &save)) {
      if (!bridge_run_pass(ctx, name, &liveness)) {
         fprintf(out, "error unknown pass %s\n", name);
         goto done;
      }
      if (!strcmp(name, "ra") || !strcmp(name, "ra-direct") ||
          !strcmp(name, "lower-copies"))
         allocated = true;
      if (!allocated && strcmp(name, "validate"))
         agx_validate(ctx, name);
   }
   fprintf(out, "ok\n");
   bridge_write_shader(out, ctx, liveness);
   if (bridge_bound)
      fprintf(out, "demand %u %u\n", bridge_demand, bridge_bound);
done:
   ralloc_free(memctx);
#ifdef AGXFUZZ_COVERAGE
   bridge_coverage_dump(); /* before the answer: no client kills a worker mid-dump */
#endif
   fprintf(out, "end\n");
   if (fclose(out) != 0)
      _exit(6);
   set_timer(0);
   shared->state = WORKER_WRITING;
   if (!write_all(answer_fd, answer, size))
      _exit(0); /* the client is gone */
   free(answer);
   shared->state = WORKER_IDLE;
}

struct sink {
   char *data;
   size_t len, cap;
};

static void
sink_reserve(struct sink *s, size_t n)
{
   if (s->len + n + 1 > s->cap) {
      s->cap = (s->len + n + 1) * 2;
      s->data = realloc(s->data, s->cap);
      if (!s->data)
         _exit(7);
   }
}

/* The worker: requests from stdin (`request TIMEOUT_MS`, the lines up to
 * `end`), answered one after another on `answer_fd`, until stdin ends, it
 * dies, or it has served WORKER_REQUESTS. The input stays as read (lines are
 * cut only once their request is whole) until consumed. */
static void
worker_loop(int answer_fd, int err_fd)
{
   char *data = shared->data;
   size_t pos = shared->start; /* where the next line starts */
   size_t body = 0;            /* in a request: where its `passes` line starts */
   bool in_request = false, skipping = false;
   long timeout_ms = 0;
   unsigned served = 0;
   char **lines = NULL;
   unsigned lines_cap = 0;
   for (;;) {
      size_t len = shared->len;
      char *nl = len > pos ? memchr(data + pos, '\n', len - pos) : NULL;
      if (!nl) {
         /* keep what is not consumed at the front, then read more */
         size_t start = shared->start;
         if (start) {
            memmove(data, data + start, len - start);
            shared->len = len -= start;
            shared->start = 0;
            pos -= start;
            body -= start;
         }
         if (len == INPUT_BYTES) {
            /* one request larger than the buffer: refused, then skipped */
            static const char big[] = "error request too large\nend\n";
            if (!write_all(answer_fd, big, sizeof(big) - 1))
               _exit(0);
            shared->start = shared->len = pos = 0;
            in_request = false;
            skipping = true;
            continue;
         }
         ssize_t n = read(0, data + len, INPUT_BYTES - len);
         if (n < 0 && errno == EINTR)
            continue;
         if (n <= 0) {
            shared->state = WORKER_EOF;
            _exit(0);
         }
         shared->len = len + n;
         continue;
      }
      char *line = data + pos;
      size_t n = nl - line;
      if (n && line[n - 1] == '\r')
         n--;
      pos = nl + 1 - data;
      bool end = n == 3 && !memcmp(line, "end", 3);
      if (skipping) {
         skipping = !end;
         shared->start = pos;
         continue;
      }
      if (!in_request) {
         char head[64];
         long ms;
         snprintf(head, sizeof(head), "%.*s", (int)(n < 63 ? n : 63), line);
         if (sscanf(head, "request %ld", &ms) == 1 && ms > 0) {
            in_request = true;
            timeout_ms = ms;
            body = pos;
         } else {
            shared->start = pos;
            static const char refused[] = "error expected `request TIMEOUT_MS`\nend\n";
            if (n > 0 && !write_all(answer_fd, refused, sizeof(refused) - 1))
               _exit(0);
         }
         continue;
      }
      if (!end)
         continue;
      /* The whole request is in: its lines cut (NUL-terminated), and it is
       * consumed before it is served */
      unsigned nlines = 0;
      for (char *p = data + body; p < line;) {
         char *eol = memchr(p, '\n', line - p);
         *eol = 0;
         if (eol > p && eol[-1] == '\r')
            eol[-1] = 0;
         if (nlines == lines_cap) {
            lines_cap = lines_cap ? lines_cap * 2 : 256;
            lines = realloc(lines, lines_cap * sizeof(char *));
            if (!lines)
               _exit(7);
         }
         lines[nlines++] = p;
         p = eol + 1;
      }
      shared->start = pos;
      in_request = false;
      serve_request(lines, nlines, timeout_ms, answer_fd, err_fd);
      if (++served >= WORKER_REQUESTS)
         _exit(0); /* idle: the bridge forks the next */
   }
}

static struct worker {
   pid_t pid; /* 0: none */
   int err;   /* the worker's stderr (and stdout): a file the bridge reads */
} worker;

/* A file for a worker's stderr, emptied at each request: memory, not disk */
static int
stderr_file(void)
{
   int fd = -1;
#if defined(__linux__) && defined(MFD_CLOEXEC)
   fd = memfd_create("agxfuzz-mesa-stderr", 0);
#endif
   if (fd < 0) {
      FILE *f = tmpfile();
      fd = f ? dup(fileno(f)) : -1;
      if (f)
         fclose(f);
   }
   if (fd >= 0)
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND);
   return fd;
}

/* Forks the next worker, ahead of its first request (while the client is busy
 * with the last answer) */
static bool
worker_spawn(void)
{
   int err = stderr_file();
   if (err < 0)
      return false;
   shared->state = WORKER_IDLE;
   fflush(stdout);
   pid_t bridge = getpid(), pid = fork();
   if (pid < 0) {
      close(err);
      return false;
   }
   if (pid == 0) {
#ifdef __linux__
      /* A bridge killed mid-request (the client's deadline) takes its worker along */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != bridge)
         _exit(0); /* the bridge ended before the line above */
#endif
      signal(SIGPIPE, SIG_DFL);
      signal(SIGALRM, SIG_DFL);
#ifdef AGXFUZZ_COVERAGE
      signal(SIGABRT, bridge_coverage_on_crash);
      signal(SIGSEGV, bridge_coverage_on_crash);
      signal(SIGBUS, bridge_coverage_on_crash);
      signal(SIGFPE, bridge_coverage_on_crash);
#endif
      /* Answers go to the client's pipe by their own descriptor; whatever Mesa
       * itself prints, on stdout or stderr, goes to the stderr file */
      int answer_fd = dup(1);
      if (answer_fd < 0)
         _exit(4);
      setvbuf(stdout, NULL, _IONBF, 0);
      dup2(err, 1);
      dup2(err, 2);
      close(err);
      worker_loop(answer_fd, 2);
   }
   worker = (struct worker){pid, err};
   return true;
}

/* Every stderr line prefixed, so no line of Mesa's can end the answer */
static void
print_quoted(int fd)
{
   struct sink s = {0};
   for (off_t off = 0;;) {
      sink_reserve(&s, 65536);
      ssize_t n = pread(fd, s.data + s.len, s.cap - s.len - 1, off);
      if (n < 0 && errno == EINTR)
         continue;
      if (n <= 0)
         break;
      s.len += n;
      off += n;
   }
   if (s.data)
      s.data[s.len] = 0;
   const char *p = s.data ? s.data : "";
   while (*p) {
      const char *nl = strchr(p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen(p);
      printf("| %.*s\n", (int)n, p);
      p += n + (nl ? 1 : 0);
   }
   free(s.data);
}

int
main(void)
{
   /* A client gone must not kill the bridge mid-answer: its write fails and
    * the bridge ends */
   signal(SIGPIPE, SIG_IGN);
   printf("agxfuzz-mesa-bridge 1 %s\n", AGXFUZZ_MESA_VERSION);
   fflush(stdout);
   shared = mmap(NULL, sizeof(*shared) + INPUT_BYTES, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
   if (shared == MAP_FAILED)
      return 3;
   for (;;) {
      /* a fork that fails (a process limit) is tried again for a while */
      for (int tries = 0; !worker_spawn(); ++tries) {
         if (tries == 100)
            return 3;
         usleep(10000);
      }
      int status = 0;
      while (waitpid(worker.pid, &status, 0) < 0 && errno == EINTR)
         ;
      int state = shared->state;
      if (state == WORKER_EOF)
         break;
      if (state == WORKER_BUSY) {
         /* The worker died in the middle of a request: that is its answer */
         if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            printf("timeout\n");
         else if (WIFSIGNALED(status))
            printf("crash signal %d\n", WTERMSIG(status));
         else
            printf("crash exit %d\n", WEXITSTATUS(status));
         print_quoted(worker.err);
         printf("end\n");
         fflush(stdout);
         if (ferror(stdout))
            break;
      } else if (state == WORKER_WRITING && WIFEXITED(status)) {
         break; /* its answer could not be written: the client is gone */
      }
      /* WORKER_IDLE: replaced after WORKER_REQUESTS, or killed from outside
       * between requests */
      close(worker.err);
      worker.pid = 0;
   }
   return 0;
}
