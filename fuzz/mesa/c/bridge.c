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
 * A forked worker does the parsing and the passes, request after request (its
 * ralloc context freed and the bridge's own state reset after each), so a
 * Mesa assert or hang costs one request and never the bridge: the worker
 * that died is replaced by a fresh fork, made right after the answer, ahead
 * of the next request. A worker is also replaced after WORKER_REQUESTS
 * requests. agx_validate runs on the input and after every pre-RA pass, as
 * Mesa runs it in debug builds (never on allocated IR).
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One request in the worker: parse, run, print the whole answer (`ok` and the
 * shader, or `error REASON`, then `end`). A Mesa assert or agx_validate failure
 * ends the worker instead, which the parent reports as the request's crash.
 * The request's memory is freed before its `end` is written, so a crash while
 * freeing it (a heap Mesa corrupted) is still this request's, never the next
 * one's. */
static void
serve_request(char **lines, unsigned nlines)
{
   const char *error = NULL;
   void *memctx = ralloc_context(NULL);
   bridge_demand = bridge_bound = 0;
   bridge_record_copies = false;
   agx_context *ctx = NULL;
   if (nlines < 1 || strncmp(lines[0], "passes", 6) != 0) {
      printf("error expected a `passes` line\n");
      goto done;
   }
   ctx = bridge_read_shader(memctx, lines + 1, nlines - 1, &error);
   if (!ctx) {
      printf("error %s\n", error);
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
         printf("error unknown pass %s\n", name);
         goto done;
      }
      if (!strcmp(name, "ra") || !strcmp(name, "ra-direct") ||
          !strcmp(name, "lower-copies"))
         allocated = true;
      if (!allocated && strcmp(name, "validate"))
         agx_validate(ctx, name);
   }
   printf("ok\n");
   bridge_write_shader(stdout, ctx, liveness);
   if (bridge_bound)
      printf("demand %u %u\n", bridge_demand, bridge_bound);
done:
   ralloc_free(memctx);
#ifdef AGXFUZZ_COVERAGE
   bridge_coverage_dump(); /* before `end`: no client kills a worker mid-dump */
#endif
   printf("end\n");
   fflush(stdout);
}

struct sink {
   char *data;
   size_t len, cap;
};

static void
sink_add(struct sink *s, const char *buf, size_t n)
{
   if (s->len + n + 1 > s->cap) {
      s->cap = (s->len + n + 1) * 2;
      s->data = realloc(s->data, s->cap);
   }
   memcpy(s->data + s->len, buf, n);
   s->len += n;
   s->data[s->len] = 0;
}

/* A whole answer has arrived: the worker ends every one with a line `end`,
 * which no line of a shader is */
static bool
sink_answered(const struct sink *s)
{
   return (s->len == 4 && !memcmp(s->data, "end\n", 4)) ||
          (s->len > 4 && !memcmp(s->data + s->len - 5, "\nend\n", 5));
}

/* The worker: requests from `fd` (each the lines after `request`, up to
 * `end`), one after another, until the parent closes the pipe or it dies */
static void
worker_loop(int fd)
{
   struct sink in = {0};
   char **lines = NULL;
   unsigned lines_cap = 0;
   char buf[65536];
   for (;;) {
      in.len = 0;
      while (!sink_answered(&in)) {
         ssize_t n = read(fd, buf, sizeof(buf));
         if (n == 0)
            _exit(0);
         if (n < 0 && errno == EINTR)
            continue;
         if (n < 0)
            _exit(4);
         sink_add(&in, buf, n);
      }
      unsigned nlines = 0;
      for (char *p = in.data, *end = in.data + in.len; p < end;) {
         char *nl = memchr(p, '\n', end - p);
         *nl = 0;
         if (nl > p && nl[-1] == '\r')
            nl[-1] = 0;
         if (nlines == lines_cap) {
            lines_cap = lines_cap ? lines_cap * 2 : 256;
            lines = realloc(lines, lines_cap * sizeof(char *));
         }
         lines[nlines++] = p;
         p = nl + 1;
      }
      serve_request(lines, nlines - 1 /* without `end` */);
   }
}

static long
now_ms(void)
{
   struct timespec ts;
   clock_gettime(CLOCK_MONOTONIC, &ts);
   return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Every stderr line prefixed, so no line of Mesa's can end the answer */
static void
print_quoted(const struct sink *s)
{
   const char *p = s->data ? s->data : "";
   while (*p) {
      const char *nl = strchr(p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen(p);
      printf("| %.*s\n", (int)n, p);
      p += n + (nl ? 1 : 0);
   }
}

/* Requests a worker serves before it is replaced: bounds what a request could
 * leave behind (a leak outside its ralloc context) for the ones after it */
#define WORKER_REQUESTS 256

static struct worker {
   pid_t pid; /* 0: none */
   int req, out, err;
   unsigned served;
} worker;

static void
worker_reap(bool kill_it)
{
   if (!worker.pid)
      return;
   close(worker.req);
   if (kill_it)
      kill(worker.pid, SIGKILL);
   int status;
   while (waitpid(worker.pid, &status, 0) < 0 && errno == EINTR)
      ;
   if (worker.out >= 0)
      close(worker.out);
   if (worker.err >= 0)
      close(worker.err);
   worker.pid = 0;
}

/* Forks the next worker ahead of its first request (while the client is busy
 * with the last answer), so no request waits for a fork */
static bool
worker_spawn(void)
{
   int req[2], out[2], err[2];
   if (pipe(req) || pipe(out) || pipe(err))
      return false;
   fflush(stdout);
   pid_t pid = fork();
   if (pid < 0)
      return false;
   if (pid == 0) {
#ifdef __linux__
      /* A bridge killed mid-request (the client's deadline) takes its worker along */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
      signal(SIGPIPE, SIG_DFL);
#ifdef AGXFUZZ_COVERAGE
      signal(SIGABRT, bridge_coverage_on_crash);
      signal(SIGSEGV, bridge_coverage_on_crash);
      signal(SIGBUS, bridge_coverage_on_crash);
      signal(SIGFPE, bridge_coverage_on_crash);
#endif
      /* An answer leaves in one write (or a few, for a large shader) */
      static char answer_buffer[1 << 18];
      setvbuf(stdout, answer_buffer, _IOFBF, sizeof(answer_buffer));
      dup2(out[1], 1);
      dup2(err[1], 2);
      close(req[1]);
      close(out[0]);
      close(err[0]);
      close(out[1]);
      close(err[1]);
      worker_loop(req[0]);
   }
   close(req[0]);
   close(out[1]);
   close(err[1]);
   worker = (struct worker){pid, req[1], out[0], err[0], 0};
   return true;
}

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

/* Hands one request (`passes` ... `end`) to the worker and answers it: the
 * worker's answer, or its crash (Mesa's stderr), or a timeout */
static void
serve(const struct sink *request, long timeout_ms)
{
   if (!worker.pid && !worker_spawn()) {
      printf("error fork: %s\nend\n", strerror(errno));
      fflush(stdout);
      return;
   }
   /* A worker never dies idle, but if it did, a write fails and the
    * request goes to a fresh one */
   if (!write_all(worker.req, request->data, request->len)) {
      worker_reap(true);
      if (!worker_spawn() ||
          !write_all(worker.req, request->data, request->len)) {
         printf("error the worker took no request: %s\nend\n", strerror(errno));
         fflush(stdout);
         worker_reap(true);
         return;
      }
   }

   struct sink o = {0}, e = {0};
   struct pollfd fds[2] = {{worker.out, POLLIN, 0}, {worker.err, POLLIN, 0}};
   int open_fds = 2;
   bool timed_out = false, answered = false;
   long deadline = now_ms() + timeout_ms;
   char buf[65536];
   while (open_fds > 0 && !answered) {
      long left = deadline - now_ms();
      if (left <= 0) {
         timed_out = true;
         break;
      }
      int r = poll(fds, 2, (int)left);
      if (r <= 0)
         continue;
      for (int k = 0; k < 2; ++k) {
         if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
         ssize_t n = read(fds[k].fd, buf, sizeof(buf));
         if (n > 0) {
            sink_add(k ? &e : &o, buf, n);
            answered = !k && sink_answered(&o);
         } else if (n == 0 || errno != EINTR) {
            close(fds[k].fd);
            fds[k].fd = -1;
            open_fds--;
         }
      }
   }
   worker.out = fds[0].fd;
   worker.err = fds[1].fd;

   if (answered) {
      /* Whatever Mesa said on stderr for a request that came back is not kept:
       * drain it, so the next request's crash text is its own */
      struct pollfd ef = {worker.err, POLLIN, 0};
      while (worker.err >= 0 && poll(&ef, 1, 0) > 0 &&
             read(worker.err, buf, sizeof(buf)) > 0)
         ;
      fwrite(o.data, 1, o.len, stdout);
      if (++worker.served >= WORKER_REQUESTS)
         worker_reap(false);
   } else {
      int status = 0;
      pid_t pid = worker.pid;
      close(worker.req);
      if (timed_out)
         kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
         ;
      for (int k = 0; k < 2; ++k) {
         if (fds[k].fd >= 0)
            close(fds[k].fd);
      }
      worker.pid = 0;
      if (timed_out) {
         printf("timeout\n");
      } else if (WIFSIGNALED(status)) {
         printf("crash signal %d\n", WTERMSIG(status));
      } else {
         printf("crash exit %d\n", WEXITSTATUS(status));
      }
      print_quoted(&e);
      printf("end\n");
   }
   fflush(stdout);
   free(o.data);
   free(e.data);
   /* The next worker is forked now, while the client reads this answer */
   if (!worker.pid)
      worker_spawn();
}

int
main(void)
{
   /* A worker that died must not take the bridge with it when the request is
    * written; a dead client still ends the bridge (its stdout fails below) */
   signal(SIGPIPE, SIG_IGN);
   printf("agxfuzz-mesa-bridge 1 %s\n", AGXFUZZ_MESA_VERSION);
   fflush(stdout);
   worker_spawn();

   char *line = NULL;
   size_t cap = 0;
   struct sink request = {0};
   long timeout_ms = 0;
   bool in_request = false;
   ssize_t n;
   while ((n = getline(&line, &cap, stdin)) >= 0) {
      while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
         line[--n] = 0;
      if (!in_request) {
         if (sscanf(line, "request %ld", &timeout_ms) == 1 && timeout_ms > 0) {
            in_request = true;
            request.len = 0;
         } else if (n > 0) {
            printf("error expected `request TIMEOUT_MS`\nend\n");
            fflush(stdout);
         }
         continue;
      }
      sink_add(&request, line, n);
      sink_add(&request, "\n", 1);
      if (strcmp(line, "end") == 0) {
         serve(&request, timeout_ms);
         in_request = false;
         if (ferror(stdout))
            break;
      }
   }
   worker_reap(false);
   return 0;
}
