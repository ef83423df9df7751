/* vecmath.c - the vector math of WilmerAI's semantic memory search (A9.3, A9.5): float32 blobs, cosine similarity, ranking, Reciprocal Rank Fusion. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "vecmath.h"

unsigned char *
vecmath_blob(const double *v, size_t dim)
{
	unsigned char	*b = xcalloc(dim + 1, sizeof(float));
	float		 f;
	size_t		 i;

	for (i = 0; i < dim; i++) {
		f = (float)v[i];
		memcpy(b + i * sizeof(f), &f, sizeof(f));
	}
	return b;
}

double *
vecmath_unblob(const void *blob, size_t n, size_t *dim)
{
	const unsigned char	*p = blob;
	double			*v;
	float			 f;
	size_t			 i;

	*dim = 0;
	if (n == 0 || n % sizeof(float) != 0)
		return NULL;
	*dim = n / sizeof(float);
	v = xcalloc(*dim, sizeof(double));
	for (i = 0; i < *dim; i++) {
		memcpy(&f, p + i * sizeof(f), sizeof(f));
		v[i] = f;
	}
	return v;
}

static double
dot(const double *a, const double *b, size_t n)
{
	double	 s = 0;
	size_t	 i;

	for (i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

double
vecmath_cosine(const double *a, size_t na, const double *b, size_t nb)
{
	double	 ma, mb;

	if (na != nb)
		return 0.0;
	ma = sqrt(dot(a, a, na));
	mb = sqrt(dot(b, b, nb));
	if (ma == 0.0 || mb == 0.0)
		return 0.0;
	return dot(a, b, na) / (ma * mb);
}

size_t
vecmath_rank(const double *q, size_t dim, struct vecmath_item *items,
    size_t n, long top)
{
	struct vecmath_item	 t;
	size_t			 i, k;

	for (i = 0; i < n; i++) {
		items[i].vi_score = vecmath_cosine(q, dim, items[i].vi_v,
		    items[i].vi_dim);
		t = items[i];
		for (k = i; k > 0 && items[k - 1].vi_score < t.vi_score; k--)
			items[k] = items[k - 1];
		items[k] = t;
	}
	return top >= 0 && (size_t)top < n ? (size_t)top : n;
}

int64_t *
vecmath_rrf(const int64_t *const *lists, const size_t *lens, size_t nl,
    size_t *n)
{
	size_t	 total = 0, i, j, k, m = 0;
	int64_t	*ids, id, ti;
	double	*score, ts;

	for (i = 0; i < nl; i++)
		total += lens[i];
	ids = xcalloc(total + 1, sizeof(int64_t));
	score = xcalloc(total + 1, sizeof(double));
	for (i = 0; i < nl; i++)
		for (j = 0; j < lens[i]; j++) {
			id = lists[i][j];
			for (k = 0; k < m && ids[k] != id; k++)
				;
			if (k == m)
				ids[m++] = id;
			score[k] += 1.0 / (VECMATH_RRF_K + (double)(j + 1));
		}
	for (i = 1; i < m; i++) {	/* stable: first seen wins ties */
		ti = ids[i];
		ts = score[i];
		for (k = i; k > 0 && score[k - 1] < ts; k--) {
			ids[k] = ids[k - 1];
			score[k] = score[k - 1];
		}
		ids[k] = ti;
		score[k] = ts;
	}
	free(score);
	*n = m;
	return ids;
}
