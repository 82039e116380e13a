/* advisor internals shared by the rules (advisor.c) and the renderers (render.c). */
#ifndef GC_ADVISOR_INT_H
#define GC_ADVISOR_INT_H

#include "advisor.h"

/* A figure of the finding by name, or NULL. */
const gc_advisor_figure *gc__adv_figure(const gc_finding *f, const char *name);
/* The figure's number, or NaN when absent or a text. */
double gc__adv_num(const gc_finding *f, const char *name);

#endif
