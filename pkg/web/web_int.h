/* web internals: the asset table generated from web/ at build time (scripts/embed-web.cmake). */
#ifndef GC_WEB_INT_H
#define GC_WEB_INT_H

#include "web.h"

/* Sorted by path, ended by an entry whose path is NULL. */
extern const gc_web_asset gc__web_assets[];

#endif
