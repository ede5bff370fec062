/* wisp_median.c: the median of an array of doubles by selection
 * (common/wisp_util.h).
 *
 * Quickselect with a three-way partition (values below, equal to and above
 * the pivot), the pivot the median of the range's first, middle and last
 * values: O(n) expected, and a range of equal values (a step's identical
 * all-reduces, the common case of the metrics' samples) is one pass.  The
 * values come out partly reordered.  The result is the same element(s) a
 * full sort would put in the middle, so it equals a sort-based median to
 * the bit; NaN values are outside its contract, as they are for a sort. */
#include "config.h"
#include "common/wisp_util.h"

#include <math.h>

static void swap_d(double *a, double *b)
{
  double t = *a;
  *a = *b;
  *b = t;
}

static double median3(double a, double b, double c)
{
  if (a > b)
    swap_d(&a, &b);
  if (b > c)
    b = c;
  return a > b ? a : b;
}

/* The k-th smallest of v[0..n) (0-based), v reordered so that every value
 * before position k is <= v[k] and every value after it >= v[k]. */
static double select_kth(double *v, size_t n, size_t k)
{
  size_t lo = 0, hi = n; /* the k-th lies in v[lo..hi) */
  while (hi - lo > 1) {
    double p = median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
    /* v[lo..lt) < p, v[lt..i) == p, v[gt..hi) > p. */
    size_t lt = lo, i = lo, gt = hi;
    while (i < gt) {
      if (v[i] < p)
        swap_d(&v[lt++], &v[i++]);
      else if (v[i] > p)
        swap_d(&v[i], &v[--gt]);
      else
        i++;
    }
    if (k < lt)
      hi = lt;
    else if (k >= gt)
      lo = gt;
    else
      return p;
  }
  return v[lo];
}

double wisp_median(double *v, size_t n)
{
  if (n == 0)
    return NAN;
  double upper = select_kth(v, n, n / 2);
  if (n % 2)
    return upper;
  /* After the selection every value before n/2 is <= upper: the lower
   * middle is their largest. */
  double lower = v[0];
  for (size_t i = 1; i < n / 2; i++)
    if (v[i] > lower)
      lower = v[i];
  return (lower + upper) / 2;
}
