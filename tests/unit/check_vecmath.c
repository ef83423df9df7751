/* check_vecmath.c - the vector math of semantic memory search (A9.3, A9.5; WilmerAI's test_vector_math_utils): float32 blobs, cosine, ranking, Reciprocal Rank Fusion. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../worker/memory/vecmath.h"
#include "../testmain.h"

#define EPS	1e-9

/* A blob holds 4 bytes a dimension, float32 in native order, and
 * reads back as the float32 values. */
START_TEST(a9_3_blob_round_trip)
{
	const double	 v[] = { 0.5, -1.25, 3.0, 0.1 };
	unsigned char	*b = vecmath_blob(v, 4);
	double		*w;
	float		 f;
	size_t		 dim, i;

	memcpy(&f, b + 4, 4);
	ck_assert(f == -1.25f);
	w = vecmath_unblob(b, 16, &dim);
	ck_assert_uint_eq(dim, 4);
	for (i = 0; i < 4; i++)
		ck_assert(w[i] == (double)(float)v[i]);
	free(w);
	ck_assert_ptr_null(vecmath_unblob(b, 15, &dim));
	ck_assert_ptr_null(vecmath_unblob(b, 0, &dim));
	free(b);
}
END_TEST

START_TEST(a9_5_cosine)
{
	const double	 a[] = { 1, 2, 3 }, b[] = { 2, 4, 6 }, c[] = { -1, -2, -3 },
			 x[] = { 1, 0 }, y[] = { 0, 1 }, z[] = { 0, 0, 0 };

	ck_assert(fabs(vecmath_cosine(a, 3, a, 3) - 1.0) < EPS);
	ck_assert(fabs(vecmath_cosine(a, 3, b, 3) - 1.0) < EPS);	/* scale */
	ck_assert(fabs(vecmath_cosine(a, 3, c, 3) + 1.0) < EPS);
	ck_assert(vecmath_cosine(x, 2, y, 2) == 0.0);
	ck_assert(vecmath_cosine(a, 3, z, 3) == 0.0);
	ck_assert(vecmath_cosine(a, 3, x, 2) == 0.0);		/* mismatch */
}
END_TEST

/* Best first, equal scores in their order, cut to top. */
START_TEST(a9_5_rank_truncates)
{
	double			 q[] = { 1, 0 }, v1[] = { 0, 1 }, v2[] = { 1, 1 },
				 v3[] = { 1, 0 }, v4[] = { 0, 2 };
	struct vecmath_item	 it[] = { { 1, v1, 2, 0 }, { 2, v2, 2, 0 },
				    { 3, v3, 2, 0 }, { 4, v4, 2, 0 } };

	ck_assert_uint_eq(vecmath_rank(q, 2, it, 4, 3), 3);
	ck_assert_int_eq(it[0].vi_id, 3);
	ck_assert_int_eq(it[1].vi_id, 2);
	ck_assert_int_eq(it[2].vi_id, 1);	/* ties keep their order */
	ck_assert_int_eq(it[3].vi_id, 4);
	ck_assert_uint_eq(vecmath_rank(q, 2, it, 4, -1), 4);
	ck_assert_uint_eq(vecmath_rank(q, 2, it, 4, 9), 4);
}
END_TEST

static void
ck_rrf(const int64_t *a, size_t na, const int64_t *b, size_t nb,
    const int64_t *want, size_t nw)
{
	const int64_t	*lists[2] = { a, b };
	size_t		 lens[2] = { na, nb }, n, i;
	int64_t		*got = vecmath_rrf(lists, lens, 2, &n);

	ck_assert_uint_eq(n, nw);
	for (i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "rank %zu: %lld, want %lld",
		    i, (long long)got[i], (long long)want[i]);
	free(got);
}

/* The addendum's example; agreement wins; a consistent middle beats a
 * single top; ids are counted once. */
START_TEST(a9_5_rrf)
{
	const int64_t	 kw[] = { 10, 20 }, ranked[] = { 20, 30 },
			 ex[] = { 20, 10, 30 };
	const int64_t	 a[] = { 1, 2, 3 }, b[] = { 4, 2, 5 }, ab[] = { 2, 1, 4,
			    3, 5 };
	const int64_t	 d[] = { 7, 7 }, e[] = { 8 }, de[] = { 7, 8 };

	ck_rrf(kw, 2, ranked, 2, ex, 3);
	ck_rrf(a, 3, b, 3, ab, 5);
	ck_rrf(d, 2, e, 1, de, 2);
	ck_rrf(NULL, 0, e, 1, e, 1);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("vecmath");
	TCase	*tc = tcase_create("vecmath");

	tcase_add_test(tc, a9_3_blob_round_trip);
	tcase_add_test(tc, a9_5_cosine);
	tcase_add_test(tc, a9_5_rank_truncates);
	tcase_add_test(tc, a9_5_rrf);
	suite_add_tcase(s, tc);
	return check_main(s);
}
