/* kineto_tables.c: the Kineto frontend's name tables: dtype sizes,
 * communication kernel and CPU-op names to collectives, rank lists.  Each
 * O(length of the name or list). */
#include "config.h"

#include "frontends/kineto_rank.h"
#include "frontends/kineto_commreg.h"

#include <stdlib.h>
#include <string.h>

int kt_dtype_size(const char *n)
{
  static const struct { const char *name; int size; } tab[] = {
    /* c10::ScalarType names (c10/core/ScalarType.h), elementSize in bytes. */
    { "Byte", 1 }, { "Char", 1 }, { "Short", 2 }, { "Int", 4 }, { "Long", 8 }, { "Half", 2 }, { "Float", 4 },
    { "Double", 8 }, { "ComplexHalf", 4 }, { "ComplexFloat", 8 }, { "ComplexDouble", 16 }, { "Bool", 1 },
    { "QInt8", 1 }, { "QUInt8", 1 }, { "QInt32", 4 }, { "BFloat16", 2 }, { "QUInt4x2", 1 }, { "QUInt2x4", 1 },
    { "Bits1x8", 1 }, { "Bits2x4", 1 }, { "Bits4x2", 1 }, { "Bits8", 1 }, { "Bits16", 2 },
    { "Float8_e5m2", 1 }, { "Float8_e4m3fn", 1 }, { "Float8_e5m2fnuz", 1 }, { "Float8_e4m3fnuz", 1 },
    { "UInt16", 2 }, { "UInt32", 4 }, { "UInt64", 8 }, { "UInt1", 1 }, { "UInt2", 1 }, { "UInt3", 1 },
    { "UInt4", 1 }, { "UInt5", 1 }, { "UInt6", 1 }, { "UInt7", 1 }, { "Int1", 1 }, { "Int2", 1 }, { "Int3", 1 },
    { "Int4", 1 }, { "Int5", 1 }, { "Int6", 1 }, { "Int7", 1 }, { "Float8_e8m0fnu", 1 },
    { "Float4_e2m1fn_x2", 1 },
    /* Demangled C++ names used by `Input type`. */
    { "float", 4 }, { "double", 8 }, { "c10::Half", 2 }, { "c10::BFloat16", 2 }, { "long int", 8 },
    { "long", 8 }, { "int64_t", 8 }, { "long long", 8 }, { "unsigned long", 8 }, { "int", 4 },
    { "unsigned int", 4 }, { "short int", 2 }, { "short", 2 }, { "signed char", 1 }, { "unsigned char", 1 },
    { "char", 1 }, { "bool", 1 }, { "c10::complex<float>", 8 }, { "c10::complex<double>", 16 },
    { "c10::complex<c10::Half>", 4 }, { "uint16_t", 2 }, { "uint32_t", 4 }, { "uint64_t", 8 },
    /* Spellings seen in other tools' mock traces. */
    { "Int64", 8 }, { "Int32", 4 }, { "Int16", 2 }, { "Int8", 1 }, { "UInt8", 1 }, { "Float16", 2 },
    { "Float32", 4 }, { "Float64", 8 },
  };
  if (!n)
    return 0;
  for (size_t i = 0; i < G_N_ELEMENTS(tab); i++)
    if (!strcmp(n, tab[i].name))
      return tab[i].size;
  if (g_str_has_prefix(n, "c10::Float8_") || g_str_has_prefix(n, "c10::Float4_"))
    return 1;
  return 0;
}

gboolean kt_is_comm_kernel_name(const char *name)
{
  const kt_commreg_entry *e = kt_commreg_lookup(name);
  return e && e->size != KT_CR_SIZE_LOCAL;
}

gboolean kt_coll_from_arg(const char *s, et_coll_type *c, int *p2p)
{
  static const struct { const char *n; et_coll_type c; int p; } tab[] = {
    { "allreduce", ET_COLL_ALL_REDUCE, 0 }, { "all_reduce", ET_COLL_ALL_REDUCE, 0 },
    { "allreduce_coalesced", ET_COLL_ALL_REDUCE, 0 }, { "all_reduce_coalesced", ET_COLL_ALL_REDUCE, 0 },
    { "broadcast", ET_COLL_BROADCAST, 0 }, { "reduce", ET_COLL_REDUCE, 0 },
    { "allgather", ET_COLL_ALL_GATHER, 0 }, { "all_gather", ET_COLL_ALL_GATHER, 0 },
    { "_allgather_base", ET_COLL_ALL_GATHER, 0 }, { "_all_gather_base", ET_COLL_ALL_GATHER, 0 },
    { "allgather_base", ET_COLL_ALL_GATHER, 0 }, { "all_gather_base", ET_COLL_ALL_GATHER, 0 },
    { "allgather_into_tensor_coalesced", ET_COLL_ALL_GATHER, 0 }, { "allgather_coalesced", ET_COLL_ALL_GATHER, 0 },
    { "all_gather_into_tensor", ET_COLL_ALL_GATHER, 0 },
    { "reduce_scatter", ET_COLL_REDUCE_SCATTER, 0 }, { "_reduce_scatter_base", ET_COLL_REDUCE_SCATTER, 0 },
    { "reduce_scatter_base", ET_COLL_REDUCE_SCATTER, 0 },
    { "reduce_scatter_tensor_coalesced", ET_COLL_REDUCE_SCATTER, 0 },
    { "reduce_scatter_tensor", ET_COLL_REDUCE_SCATTER, 0 },
    { "all_to_all", ET_COLL_ALL_TO_ALL, 0 }, { "alltoall", ET_COLL_ALL_TO_ALL, 0 },
    { "alltoall_base", ET_COLL_ALL_TO_ALL, 0 }, { "all_to_all_single", ET_COLL_ALL_TO_ALL, 0 },
    { "all_to_allv", ET_COLL_ALL_TO_ALLV, 0 }, { "alltoallv", ET_COLL_ALL_TO_ALLV, 0 },
    { "gather", ET_COLL_GATHER, 0 }, { "scatter", ET_COLL_SCATTER, 0 }, { "barrier", ET_COLL_BARRIER, 0 },
    { "send", ET_COLL_NONE, 1 }, { "recv", ET_COLL_NONE, 2 }, { "recv_anysource", ET_COLL_NONE, 2 },
  };
  if (!s)
    return FALSE;
  char *l = g_ascii_strdown(s, -1);
  gboolean found = FALSE;
  for (size_t i = 0; i < G_N_ELEMENTS(tab) && !found; i++)
    if (!strcmp(l, tab[i].n)) {
      *c = tab[i].c;
      *p2p = tab[i].p;
      found = TRUE;
    }
  g_free(l);
  return found;
}

gboolean kt_coll_from_cpu_op(const char *s, et_coll_type *c, int *p2p)
{
  if (!s)
    return FALSE;
  const char *p = NULL;
  if (g_str_has_prefix(s, "nccl:") || g_str_has_prefix(s, "rccl:") || g_str_has_prefix(s, "gloo:"))
    p = s + 5;
  else if (g_str_has_prefix(s, "c10d::"))
    p = s + 6;
  if (!p)
    return FALSE;
  char *n = g_strdup(p);
  size_t len = strlen(n);
  if (len && n[len - 1] == '_')
    n[len - 1] = 0; /* c10d::allreduce_ */
  gboolean ok = kt_coll_from_arg(n, c, p2p);
  g_free(n);
  return ok;
}

gboolean kt_coll_from_kernel(const char *name, et_coll_type *c, int *p2p)
{
  /* Token after "Kernel_": AllReduce, AllGather, ReduceScatter, Broadcast,
   * Reduce, SendRecv, Send, Recv, AllToAll; ncclDevKernel_Generic has none. */
  const char *k = strstr(name, "Kernel_");
  if (!k)
    k = strstr(name, "kernel_");
  if (!k)
    return FALSE;
  k += 7;
  static const struct { const char *t; et_coll_type c; int p; } tab[] = {
    { "AllReduce", ET_COLL_ALL_REDUCE, 0 }, { "AllGather", ET_COLL_ALL_GATHER, 0 },
    { "ReduceScatter", ET_COLL_REDUCE_SCATTER, 0 }, { "Broadcast", ET_COLL_BROADCAST, 0 },
    { "AllToAll", ET_COLL_ALL_TO_ALL, 0 }, { "SendRecv", ET_COLL_ALL_TO_ALL, 0 }, { "Send", ET_COLL_NONE, 1 },
    { "Recv", ET_COLL_NONE, 2 }, { "Reduce", ET_COLL_REDUCE, 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(tab); i++) {
    size_t n = strlen(tab[i].t);
    if (!g_ascii_strncasecmp(k, tab[i].t, n) && !g_ascii_isalpha(k[n])) {
      *c = tab[i].c;
      *p2p = tab[i].p;
      return TRUE;
    }
  }
  return FALSE;
}

gboolean kt_parse_int_list(const char *s, GArray *out)
{
  g_array_set_size(out, 0);
  const char *p = s;
  while (*p == ' ')
    p++;
  if (*p++ != '[')
    return FALSE;
  for (;;) {
    while (*p == ' ')
      p++;
    if (*p == ']')
      return p[1] == 0 || out->len == 0 ? p[1] == 0 : TRUE;
    if (*p == '.')
      return FALSE;
    char *end;
    gint64 v = g_ascii_strtoll(p, &end, 10);
    if (end == p)
      return FALSE;
    g_array_append_val(out, v);
    p = end;
    while (*p == ' ')
      p++;
    if (*p == ',')
      p++;
    else if (*p != ']')
      return FALSE;
  }
}

gboolean kt_parse_ranks(const char *s, int64_t group_size, int world, int **ranks, int *n, gboolean *truncated,
                        const char **why)
{
  *truncated = FALSE;
  *ranks = NULL;
  *n = 0;
  /* Tokenize into ints and "..." markers. */
  GArray *vals = g_array_new(FALSE, FALSE, sizeof(gint64));
  int ellipsis_at = -1, n_ellipsis = 0;
  const char *p = s;
  while (*p == ' ')
    p++;
  if (*p++ != '[') {
    *why = "does not start with '['";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  gboolean closed = FALSE;
  while (*p) {
    while (*p == ' ' || *p == ',')
      p++;
    if (*p == ']') {
      closed = TRUE;
      p++;
      break;
    }
    if (g_str_has_prefix(p, "...")) {
      n_ellipsis++;
      ellipsis_at = (int)vals->len;
      p += 3;
      continue;
    }
    char *end;
    gint64 v = g_ascii_strtoll(p, &end, 10);
    if (end == p || v < 0 || v > INT32_MAX) {
      *why = "holds something other than non-negative integers";
      g_array_free(vals, TRUE);
      return FALSE;
    }
    g_array_append_val(vals, v);
    p = end;
  }
  while (*p == ' ')
    p++;
  if (!closed || *p) {
    *why = "is not a closed list";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  gint64 *v = (gint64 *)vals->data;
  int nv = (int)vals->len;
  for (int i = 0; i < nv; i++)
    if (v[i] >= world) { /* the largest member of an elided list is listed */
      *why = "names a rank at or beyond the job's world size";
      g_array_free(vals, TRUE);
      return FALSE;
    }
  if (n_ellipsis == 0) {
    *n = nv;
    *ranks = g_new(int, nv > 0 ? nv : 1);
    for (int i = 0; i < nv; i++)
      (*ranks)[i] = (int)v[i];
    g_array_free(vals, TRUE);
    return TRUE;
  }
  if (n_ellipsis > 1 || ellipsis_at == nv) {
    /* "[0, 1, ..., 29, ...]": PyTorch cut the list; members beyond are unknown. */
    *truncated = TRUE;
    *why = "is truncated (ends with '...')";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  /* Elided arithmetic progression "[a0, a1, ..., an]". */
  if (ellipsis_at < 2 || nv - ellipsis_at < 1) {
    *why = "elides members but gives fewer than two leading values (stride unknown)";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  gint64 stride = v[1] - v[0];
  if (stride <= 0 || (v[nv - 1] - v[0]) % stride) {
    *why = "elided list is not an increasing arithmetic progression";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  gint64 count = (v[nv - 1] - v[0]) / stride + 1;
  for (int i = 0; i < nv; i++)
    if ((v[i] - v[0]) % stride || (v[i] - v[0]) / stride >= count || (i > 0 && v[i] <= v[i - 1])) {
      *why = "elided list has a value off the progression set by its first two values";
      g_array_free(vals, TRUE);
      return FALSE;
    }
  if (group_size != KT_ABSENT && group_size != count) {
    *why = "elided list's progression does not match `Group size`";
    g_array_free(vals, TRUE);
    return FALSE;
  }
  *n = (int)count;
  *ranks = g_new(int, count);
  for (gint64 i = 0; i < count; i++)
    (*ranks)[i] = (int)(v[0] + i * stride);
  g_array_free(vals, TRUE);
  return TRUE;
}
