/* fuzz_kineto_num.c: the Kineto harness (fuzz_kineto.c, included whole)
 * with a structure-aware mutator for the trace's numbers.
 *
 * Byte-level mutations rarely turn a valid trace's "dur": 100 into
 * 9223372036854775807 or "abc", yet the issue-28 bugs were exactly there:
 * sizes, counts and times at the edges of int64, of a double's exact
 * integers and of the engine's 2^61 ps, and numbers of the wrong JSON type.
 * Half of the mutations here pick one number token of the input (a run of
 * [-+0-9.eE] after ':', '[' or ',' outside strings, or the digits inside a
 * string such as "[0, 1]") and replace it with one of EDGES below; the
 * other half are libFuzzer's own (LLVMFuzzerMutate), so the grammar keeps
 * being explored.  O(input size) per mutation.
 */
#include "fuzz/fuzz_kineto.c"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Replacement values: integer and double edges, wrong types, and values
 * that are valid but extreme for a field (negative, zero, fractional). */
static const char *const EDGES[] = {
  "0", "-1", "1", "-0", "0.5", "1.5", "-1e-300", "1e-300", "5e-324",
  "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296",
  "9007199254740992", "9007199254740993", "1125899906842624", "1125899906842625",
  "2305843009213693952", "4611686018427387904", "9223372036854775807", "9223372036854775808",
  "-9223372036854775808", "18446744073709551615", "18446744073709551616", "1e19", "1e308", "1e309",
  "-1e308", "1.7976931348623157e308", "2.5e-8", "123456789012345678901234567890",
  "\"abc\"", "\"12\"", "[1,2]", "[]", "{}", "null", "true", "\"\"", "[[2305843009213693952]]",
};

/* Finds the number tokens of data[0, size): their starts and lengths
 * (at most max entries).  A number starts at a digit or '-' that follows
 * one of ":[, " and runs over [-+0-9.eE]. */
static size_t find_numbers(const uint8_t *data, size_t size, size_t *start, size_t *len, size_t max)
{
  size_t n = 0;
  for (size_t i = 0; i < size && n < max; i++) {
    gboolean digit = (data[i] >= '0' && data[i] <= '9') || data[i] == '-';
    if (!digit || (i > 0 && !strchr(":[, ", data[i - 1])))
      continue;
    size_t k = i + 1;
    while (k < size && (g_ascii_isdigit(data[k]) || strchr("-+.eE", data[k])))
      k++;
    start[n] = i;
    len[n++] = k - i;
    i = k - 1;
  }
  return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
  GRand *rng = g_rand_new_with_seed(seed);
  size_t out = 0;
  if (g_rand_boolean(rng)) {
    enum { MAX_NUMBERS = 4096 };
    static size_t start[MAX_NUMBERS], len[MAX_NUMBERS];
    size_t n = find_numbers(data, size, start, len, MAX_NUMBERS);
    if (n > 0) {
      size_t pick = (size_t)g_rand_int_range(rng, 0, (gint32)n);
      const char *edge = EDGES[g_rand_int_range(rng, 0, (gint32)G_N_ELEMENTS(EDGES))];
      size_t el = strlen(edge), s = start[pick], l = len[pick];
      if (size - l + el <= max_size) {
        memmove(data + s + el, data + s + l, size - s - l);
        memcpy(data + s, edge, el);
        out = size - l + el;
      }
    }
  }
  g_rand_free(rng);
  return out ? out : LLVMFuzzerMutate(data, size, max_size);
}
