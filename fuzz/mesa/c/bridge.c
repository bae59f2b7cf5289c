/*
 * agxfuzz's Mesa bridge: a persistent process that runs Mesa's AGX backend
 * passes on one function per request, each request in a forked child.
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
 *   timeout / | stderr line... / end       the child outran TIMEOUT_MS
 *
 * The child does the parsing and the passes, so a Mesa assert or hang costs
 * one request and never the bridge. agx_validate runs on the input and after
 * every pre-RA pass, as Mesa runs it in debug builds (never on allocated IR).
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

/* The child: parse, run, print; its exit status tells the parent how. */
static void
run_child(char **lines, unsigned nlines)
{
   const char *error = NULL;
   void *memctx = ralloc_context(NULL);
   if (nlines < 1 || strncmp(lines[0], "passes", 6) != 0) {
      printf("error expected a `passes` line\n");
      fflush(stdout);
      _exit(3);
   }
   agx_context *ctx = bridge_read_shader(memctx, lines + 1, nlines - 1, &error);
   if (!ctx) {
      printf("error %s\n", error);
      fflush(stdout);
      _exit(3);
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
         fflush(stdout);
         _exit(3);
      }
      if (!strcmp(name, "ra") || !strcmp(name, "ra-direct") ||
          !strcmp(name, "lower-copies"))
         allocated = true;
      if (!allocated && strcmp(name, "validate"))
         agx_validate(ctx, name);
   }
   bridge_write_shader(stdout, ctx, liveness);
   if (bridge_bound)
      printf("demand %u %u\n", bridge_demand, bridge_bound);
   fflush(stdout);
   _exit(0);
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

static void
serve(char **lines, unsigned nlines, long timeout_ms)
{
   int out[2], err[2];
   if (pipe(out) || pipe(err)) {
      printf("error pipe: %s\nend\n", strerror(errno));
      return;
   }
   fflush(stdout);
   pid_t pid = fork();
   if (pid < 0) {
      printf("error fork: %s\nend\n", strerror(errno));
      return;
   }
   if (pid == 0) {
#ifdef __linux__
      /* A bridge killed mid-request (the client's deadline) takes its child along */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
      dup2(out[1], 1);
      dup2(err[1], 2);
      close(out[0]);
      close(err[0]);
      close(out[1]);
      close(err[1]);
      run_child(lines, nlines);
   }
   close(out[1]);
   close(err[1]);

   struct sink o = {0}, e = {0};
   struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
   int open_fds = 2;
   bool timed_out = false;
   long deadline = now_ms() + timeout_ms;
   char buf[65536];
   while (open_fds > 0) {
      long left = deadline - now_ms();
      if (left <= 0) {
         timed_out = true;
         break;
      }
      int r = poll(fds, 2, (int)left);
      if (r < 0 && errno == EINTR)
         continue;
      if (r <= 0)
         continue;
      for (int k = 0; k < 2; ++k) {
         if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
         ssize_t n = read(fds[k].fd, buf, sizeof(buf));
         if (n > 0) {
            sink_add(k ? &e : &o, buf, n);
         } else if (n == 0 || errno != EINTR) {
            close(fds[k].fd);
            fds[k].fd = -1;
            open_fds--;
         }
      }
   }
   if (timed_out)
      kill(pid, SIGKILL);
   int status = 0;
   while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
      ;
   for (int k = 0; k < 2; ++k) {
      if (fds[k].fd >= 0)
         close(fds[k].fd);
   }

   if (timed_out) {
      printf("timeout\n");
      print_quoted(&e);
   } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      printf("ok\n%s", o.data ? o.data : "");
   } else if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
      printf("%s", o.data ? o.data : "error no reason\n");
   } else {
      if (WIFSIGNALED(status))
         printf("crash signal %d\n", WTERMSIG(status));
      else
         printf("crash exit %d\n", WEXITSTATUS(status));
      print_quoted(&e);
   }
   printf("end\n");
   fflush(stdout);
   free(o.data);
   free(e.data);
}

int
main(void)
{
   /* A dead client must not leave the bridge writing into a closed pipe */
   signal(SIGPIPE, SIG_DFL);
   printf("agxfuzz-mesa-bridge 1 %s\n", AGXFUZZ_MESA_VERSION);
   fflush(stdout);

   char *line = NULL;
   size_t cap = 0;
   unsigned nlines = 0, lines_cap = 0;
   char **lines = NULL;
   long timeout_ms = 0;
   bool in_request = false;
   ssize_t n;
   while ((n = getline(&line, &cap, stdin)) >= 0) {
      while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
         line[--n] = 0;
      if (!in_request) {
         if (sscanf(line, "request %ld", &timeout_ms) == 1 && timeout_ms > 0) {
            in_request = true;
            nlines = 0;
         } else if (n > 0) {
            printf("error expected `request TIMEOUT_MS`\nend\n");
            fflush(stdout);
         }
         continue;
      }
      if (strcmp(line, "end") == 0) {
         serve(lines, nlines, timeout_ms);
         for (unsigned k = 0; k < nlines; ++k)
            free(lines[k]);
         in_request = false;
         continue;
      }
      if (nlines == lines_cap) {
         lines_cap = lines_cap ? lines_cap * 2 : 256;
         lines = realloc(lines, lines_cap * sizeof(char *));
      }
      lines[nlines++] = strdup(line);
   }
   return 0;
}
