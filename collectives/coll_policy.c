/* coll_policy.c: the collective policy (algorithm per type and dimension,
 * chunk count, reduction cost) read from the network config (the
 * nccl-tests conventions are in coll_facts.c).  O(1) per call except
 * parsing, which is linear in the setting text. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll_internal.h"

#define COLL_MAX_CHUNKS 1024

coll_policy *coll_policy_new_default(void)
{
  coll_policy *p = g_new0(coll_policy, 1);
  p->chunks = 1;
  coll_library_params_default(COLL_LIBRARY_IDEAL, &p->lib);
  return p;
}

void coll_policy_free(coll_policy *p)
{
  g_free(p);
}

void coll_policy_force(coll_policy *p, coll_algo a)
{
  g_return_if_fail(p != NULL && (int)a >= 0 && a < COLL_ALGO_COUNT);
  for (int i = 0; i < COLL_PRIM_COUNT; i++) {
    p->n_algo[i] = a == COLL_ALGO_AUTO ? 0 : 1;
    for (int d = 0; d < COLL_MAX_DIMS; d++)
      p->algo[i][d] = a;
  }
}

void coll_policy_set_chunks(coll_policy *p, int chunks)
{
  g_return_if_fail(p != NULL && chunks >= 1 && chunks <= COLL_MAX_CHUNKS);
  p->chunks = chunks;
}

void coll_policy_set_reduce_bw(coll_policy *p, wisp_bw_Bps bw)
{
  g_return_if_fail(p != NULL);
  p->reduce_bw = bw;
}

void coll_policy_set_in_switch_reduction(coll_policy *p, gboolean on)
{
  g_return_if_fail(p != NULL);
  p->in_switch_reduction = on;
}

void coll_policy_set_library(coll_policy *p, const coll_library_params *lib)
{
  g_return_if_fail(p != NULL && lib != NULL);
  p->lib = *lib;
}

const coll_library_params *coll_policy_library(const coll_policy *p)
{
  return &p->lib;
}

/* Parses "ring" or "ring, direct" into per-dimension algorithms. */
static gboolean parse_algo_list(const cfg_doc *doc, const char *key, const char *value, int line,
                                coll_prim prim, coll_policy *p, GError **error)
{
  gchar **parts = g_strsplit(value, ",", -1);
  int n = 0;
  gboolean ok = TRUE;
  for (int i = 0; parts[i] != NULL; i++) {
    char *name = g_strstrip(parts[i]);
    coll_algo a;
    if (n >= COLL_MAX_DIMS) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_LIMIT,
                  "%s:%d: %s lists more than %d algorithms; give at most one per network dimension",
                  cfg_source(doc), line, key, COLL_MAX_DIMS);
      ok = FALSE;
      break;
    }
    if (!coll_algo_from_name(name, &a)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s:%d: %s: unknown algorithm '%s'; use auto, ring, ring_bidir, direct, "
                  "halving_doubling, double_binary_tree, pairwise, nvls or hierarchical",
                  cfg_source(doc), line, key, name);
      ok = FALSE;
      break;
    }
    if (a != COLL_ALGO_AUTO && a != COLL_ALGO_HIERARCHICAL && !coll_algo_supports(a, prim)) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s:%d: %s: algorithm '%s' is not defined for %s; see doc/collectives.md for "
                  "the algorithms of each collective",
                  cfg_source(doc), line, key, name, coll_prim_name(prim));
      ok = FALSE;
      break;
    }
    p->algo[prim][n++] = a;
  }
  g_strfreev(parts);
  if (ok && n == 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID, "%s:%d: %s is empty; give an algorithm name or auto",
                cfg_source(doc), line, key);
    ok = FALSE;
  }
  if (ok)
    p->n_algo[prim] = (n == 1 && p->algo[prim][0] == COLL_ALGO_AUTO) ? 0 : n;
  return ok;
}

coll_policy *coll_policy_new_from_topo(const topo *t, GError **error)
{
  return coll_policy_from_config(topo_config(t), t, error);
}

coll_policy *coll_policy_from_config(const cfg_doc *doc, const topo *t, GError **error)
{
  coll_policy *p = coll_policy_new_default();
  int line = 0;
  if (doc == NULL) /* no config: the defaults, and the topology's default library */
    goto library;
  for (int i = 0; i < COLL_PRIM_COUNT; i++) {
    char *key = g_strdup_printf("collectives.%s", coll_prim_name((coll_prim)i));
    const char *v = cfg_get(doc, key, &line);
    gboolean ok = v == NULL || parse_algo_list(doc, key, v, line, (coll_prim)i, p, error);
    g_free(key);
    if (!ok)
      goto fail;
  }
  const char *v = cfg_get(doc, "collectives.chunks", &line);
  if (v != NULL) {
    char *end = NULL;
    errno = 0;
    long c = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || c < 1 || c > COLL_MAX_CHUNKS) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s:%d: collectives.chunks '%s' must be an integer from 1 to %d",
                  cfg_source(doc), line, v, COLL_MAX_CHUNKS);
      goto fail;
    }
    p->chunks = (int)c;
  }
  v = cfg_get(doc, "collectives.reduce_bw", &line);
  if (v != NULL && g_ascii_strcasecmp(v, "off") != 0) {
    const char *why = NULL;
    if (!wisp_parse_bandwidth(v, &p->reduce_bw, &why) || p->reduce_bw == 0) {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s:%d: collectives.reduce_bw '%s': %s; give a bandwidth such as 2000GB/s, or off",
                  cfg_source(doc), line, v, why ? why : "must be positive");
      goto fail;
    }
  }
  v = cfg_get(doc, "collectives.in_switch_reduction", &line);
  if (v != NULL) {
    if (g_ascii_strcasecmp(v, "true") == 0 || g_ascii_strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0) {
      p->in_switch_reduction = TRUE;
    } else if (g_ascii_strcasecmp(v, "false") == 0 || g_ascii_strcasecmp(v, "no") == 0 || strcmp(v, "0") == 0) {
      p->in_switch_reduction = FALSE;
    } else {
      g_set_error(error, WISP_ERROR, WISP_ERROR_INVALID,
                  "%s:%d: collectives.in_switch_reduction '%s' must be true or false",
                  cfg_source(doc), line, v);
      goto fail;
    }
  }
library:
  if (!coll_library_params_from_config(doc, t, &p->lib, error))
    goto fail;
  return p;
fail:
  coll_policy_free(p);
  return NULL;
}
