/* jscan_tree.h - a jansson tree built through common/jscan, to compare jscan with json_loadb (check_jscan, fuzz/jscan_fuzz.c). */
#ifndef SLUICE_JSCAN_TREE_H
#define SLUICE_JSCAN_TREE_H

#include <jansson.h>
#include <stddef.h>

/* The value p[0..n) holds, read with jscan and built as jansson would
 * (numbers converted by jansson from the text jscan delimited); NULL
 * when jscan refuses the text. Caller decrefs. */
json_t	*jscan_tree(const char *p, size_t n);

/* Deepest nesting of arrays and objects in v (0 for a scalar), and
 * whether it holds a real anywhere (*real). */
int	 jscan_tree_depth(const json_t *v, int *real);

#endif
