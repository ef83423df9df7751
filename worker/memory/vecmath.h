/* vecmath.h - the vector math of WilmerAI's semantic memory search (A9.3, A9.5): float32 blobs, cosine similarity, ranking, Reciprocal Rank Fusion. */
#ifndef SLUICE_VECMATH_H
#define SLUICE_VECMATH_H

#include <stddef.h>
#include <stdint.h>

#define VECMATH_RRF_K	60	/* WilmerAI's RRF dampening constant */

/* v as consecutive IEEE-754 float32 in native byte order (4 bytes a
 * dimension), into a new buffer of dim * 4 bytes the caller frees. */
unsigned char	*vecmath_blob(const double *v, size_t dim);

/* The vector of a blob: n / 4 floats widened to doubles, into a new
 * array the caller frees (NULL when n is not a multiple of 4, or 0);
 * its dimension in *dim. */
double		*vecmath_unblob(const void *blob, size_t n, size_t *dim);

/* Cosine similarity of a and b; 0.0 when the dimensions differ or a
 * norm is zero. */
double		 vecmath_cosine(const double *a, size_t na, const double *b,
		    size_t nb);

/* One stored vector and its memory. */
struct vecmath_item {
	int64_t		 vi_id;
	double		*vi_v;		/* the caller's */
	size_t		 vi_dim;
	double		 vi_score;	/* set by vecmath_rank */
};

/* Score every item against q and order them best first (a stable sort:
 * equal scores keep their order). Returns how many of them to keep:
 * min(n, top); top < 0 keeps all. */
size_t		 vecmath_rank(const double *q, size_t dim,
		    struct vecmath_item *items, size_t n, long top);

/* Reciprocal Rank Fusion of nl id lists (lists[i] of lens[i] ids):
 * score(id) = sum of 1 / (VECMATH_RRF_K + rank), rank 1-based per
 * list; ids best first, equal scores in the order first seen (lists in
 * order). Returns a new array the caller frees, its length in *n (ids
 * counted once). */
int64_t		*vecmath_rrf(const int64_t *const *lists, const size_t *lens,
		    size_t nl, size_t *n);

#endif
