/* client_int: what the files of pkg/client share and nobody else uses. */
#ifndef GC_CLIENT_INT_H
#define GC_CLIENT_INT_H

#include "client.h"

/* A server's words may reach a terminal: control characters go (line breaks become blanks). */
void gc__client_printable(char *s);

#endif
