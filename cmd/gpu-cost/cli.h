/* cli: what the gpu-cost commands share: exit codes, error printing, loading inputs. */
#ifndef GC_CLI_H
#define GC_CLI_H

#include <stddef.h>

#define GC_EXIT_OK    0
#define GC_EXIT_FAIL  1 /* the work failed (out of memory, an output error) */
#define GC_EXIT_USAGE 2 /* bad input: a flag, a file, a field */

/* Largest input file accepted (a `kubectl get pods -A -o json` of a very large cluster). */
#define GC_CLI_MAX_INPUT ((size_t)2 << 30)

void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_analyze(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_tco(int argc, char **argv);
/* Remote commands: a controller's REST API (remote.c). */
int cmd_costs(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_recommendations(int argc, char **argv);

#endif
