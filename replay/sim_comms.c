/* sim_comms.c: the fold of a run's communication records (sim_comms.h). */
#include "config.h"
#include "replay/sim_comms.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

struct sim_comms {
  guint n_groups;
  sim_comms_keep keep;
  GArray *run;             /* the current end time's records, unsorted */
  GArray *kept;            /* SIM_COMMS_MEMORY: the records passed on */
  FILE *file;              /* SIM_COMMS_FILE / _MEASURED: the unlinked temporary file */
  char *file_dir;          /* its directory, for messages */
  int file_errno;          /* first write error, 0 when none */
  uint64_t in_file;
  uint64_t records, measured;
  uint64_t *gops, *gbytes; /* n_groups + 1 */
  uint64_t tops[256], tbytes[256];
  uint64_t sops[2], sbytes[2];
  GArray *choices;         /* sim_comms_choice */
};

/* Creates the temporary file in $TMPDIR (g_get_tmp_dir), unlinked at once
 * with the cleanup signals held (wisp_output_temp_unlinked), so it goes
 * away with the process whatever happens. */
static gboolean open_spill(sim_comms *f, GError **error)
{
  GError *e = NULL;
  int fd = wisp_output_temp_unlinked("wisp-comms-XXXXXX", &e);
  f->file_dir = g_strdup(g_get_tmp_dir());
  if (fd < 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO,
                "cannot create the temporary file for the run's communication records in %s: %s (set TMPDIR to a "
                "writable directory)", f->file_dir, e->message);
    g_error_free(e);
    return FALSE;
  }
  f->file = fdopen(fd, "w+b");
  if (f->file == NULL) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "cannot open the temporary file for the run's communication "
                "records in %s: %s", f->file_dir, g_strerror(errno));
    close(fd);
    return FALSE;
  }
  return TRUE;
}

sim_comms *sim_comms_new(guint n_groups, sim_comms_keep keep, GError **error)
{
  sim_comms *f = g_new0(sim_comms, 1);
  f->n_groups = n_groups;
  f->keep = keep;
  f->run = g_array_new(FALSE, FALSE, sizeof(sim_comm_record));
  f->kept = g_array_new(FALSE, FALSE, sizeof(sim_comm_record));
  f->gops = g_new0(uint64_t, n_groups + 1);
  f->gbytes = g_new0(uint64_t, n_groups + 1);
  f->choices = g_array_new(FALSE, FALSE, sizeof(sim_comms_choice));
  if ((keep == SIM_COMMS_FILE || keep == SIM_COMMS_MEASURED) && !open_spill(f, error)) {
    sim_comms_free(f);
    return NULL;
  }
  return f;
}

void sim_comms_free(sim_comms *f)
{
  if (f == NULL)
    return;
  g_array_free(f->run, TRUE);
  if (f->kept)
    g_array_free(f->kept, TRUE);
  if (f->file)
    fclose(f->file);
  g_free(f->file_dir);
  g_free(f->gops);
  g_free(f->gbytes);
  g_array_free(f->choices, TRUE);
  g_free(f);
}

/* The NCCL choice of a collective record (print_nccl_choices' rule:
 * records of library nccl carry one). */
static void fold_choice(sim_comms *f, const sim_comm_record *c)
{
  if (c->nccl_algo < 0 || c->node_type != ET_NODE_COMM_COLL)
    return;
  guint i;
  for (i = 0; i < f->choices->len; i++) {
    sim_comms_choice *x = &g_array_index(f->choices, sim_comms_choice, i);
    if (x->op == c->op && x->algo == c->nccl_algo && x->proto == c->proto)
      break;
  }
  if (i == f->choices->len) {
    sim_comms_choice x = { c->op, c->nccl_algo, c->proto, 0.0, c->algbw_bytes, c->algbw_bytes };
    g_array_append_val(f->choices, x);
  }
  sim_comms_choice *x = &g_array_index(f->choices, sim_comms_choice, i);
  x->count += 1.0 / MAX(c->n_ranks, 1);
  x->lo = MIN(x->lo, c->algbw_bytes);
  x->hi = MAX(x->hi, c->algbw_bytes);
}

/* One record in report order: the aggregates, then where it is kept. */
static void pass_on(sim_comms *f, const sim_comm_record *c)
{
  f->records++;
  f->measured += c->measured > 0;
  guint gi = c->group == ET_GROUP_WORLD || c->group >= f->n_groups ? f->n_groups : c->group;
  f->gbytes[gi] += c->bytes;
  f->gops[gi]++;
  if (c->node_type == ET_NODE_COMM_COLL) {
    f->tbytes[c->op] += c->bytes;
    f->tops[c->op]++;
  } else {
    int s = c->node_type == ET_NODE_COMM_RECV;
    f->sbytes[s] += c->bytes;
    f->sops[s]++;
  }
  fold_choice(f, c);
  if (f->keep == SIM_COMMS_MEMORY) {
    g_array_append_val(f->kept, *c);
  } else if (f->file != NULL && (f->keep == SIM_COMMS_FILE || c->measured > 0)) {
    if (fwrite(c, sizeof *c, 1, f->file) != 1 && f->file_errno == 0)
      f->file_errno = errno ? errno : EIO;
    f->in_file++;
  }
}

static gint by_rank_node(gconstpointer a, gconstpointer b)
{
  const sim_comm_record *x = a, *y = b;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return x->node_id < y->node_id ? -1 : (x->node_id > y->node_id);
}

/* Sorts the current end time's records by (rank, node_id) and passes them
 * on.  The key is unique per record (one record per rank and node). */
static void flush_run(sim_comms *f)
{
  if (f->run->len > 1)
    g_array_sort(f->run, by_rank_node);
  for (guint k = 0; k < f->run->len; k++)
    pass_on(f, &g_array_index(f->run, sim_comm_record, k));
  g_array_set_size(f->run, 0);
}

void sim_comms_add(sim_comms *f, const sim_comm_record *rec)
{
  if (f->run->len > 0) {
    sim_time_ps end = g_array_index(f->run, sim_comm_record, 0).end;
    g_assert(rec->end >= end); /* records are made at the engine's clock */
    if (rec->end > end)
      flush_run(f);
  }
  g_array_append_val(f->run, *rec);
}

gboolean sim_comms_finish(sim_comms *f, GError **error)
{
  flush_run(f);
  if (f->file != NULL && fflush(f->file) != 0 && f->file_errno == 0)
    f->file_errno = errno ? errno : EIO;
  if (f->file_errno != 0) {
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "cannot write the run's communication records to the temporary "
                "file in %s: %s (free space there or set TMPDIR to another directory)", f->file_dir,
                g_strerror(f->file_errno));
    return FALSE;
  }
  return TRUE;
}

GArray *sim_comms_steal_records(sim_comms *f)
{
  GArray *a = f->kept;
  f->kept = NULL;
  return a != NULL ? a : g_array_new(FALSE, FALSE, sizeof(sim_comm_record));
}

uint64_t sim_comms_records(const sim_comms *f) { return f->records; }
uint64_t sim_comms_measured(const sim_comms *f) { return f->measured; }
uint64_t sim_comms_group_ops(const sim_comms *f, guint gi) { return gi <= f->n_groups ? f->gops[gi] : 0; }
uint64_t sim_comms_group_bytes(const sim_comms *f, guint gi) { return gi <= f->n_groups ? f->gbytes[gi] : 0; }
uint64_t sim_comms_op_count(const sim_comms *f, int op) { return op >= 0 && op < 256 ? f->tops[op] : 0; }
uint64_t sim_comms_op_bytes(const sim_comms *f, int op) { return op >= 0 && op < 256 ? f->tbytes[op] : 0; }
uint64_t sim_comms_p2p_count(const sim_comms *f, int s) { return s == 0 || s == 1 ? f->sops[s] : 0; }
uint64_t sim_comms_p2p_bytes(const sim_comms *f, int s) { return s == 0 || s == 1 ? f->sbytes[s] : 0; }

const sim_comms_choice *sim_comms_choices(const sim_comms *f, guint *n)
{
  *n = f->choices->len;
  return (const sim_comms_choice *)f->choices->data;
}

const sim_comms *sim_comms_of(const sim_result *r, guint n_groups, sim_comms **owned)
{
  *owned = NULL;
  if (r->comm_fold != NULL)
    return r->comm_fold;
  /* A result built by hand: fold its array, already in report order. */
  sim_comms *f = sim_comms_new(n_groups, SIM_COMMS_NONE, NULL);
  for (guint k = 0; r->comms != NULL && k < r->comms->len; k++)
    pass_on(f, &g_array_index(r->comms, sim_comm_record, k));
  *owned = f;
  return f;
}

gboolean sim_comms_has_all(const sim_result *r)
{
  const sim_comms *f = r->comm_fold;
  return f == NULL || f->keep == SIM_COMMS_MEMORY || f->keep == SIM_COMMS_FILE;
}

/* Reads the temporary file from its start, 4,096 records at a time. */
static gboolean foreach_file(const sim_comms *f, gboolean measured_only, sim_comms_fn fn, void *ctx,
                             GError **error)
{
  enum { CHUNK = 4096 };
  sim_comm_record *buf = g_new(sim_comm_record, CHUNK);
  uint64_t left = f->in_file;
  gboolean ok = fseek(f->file, 0, SEEK_SET) == 0;
  while (ok && left > 0) {
    size_t want = left < CHUNK ? (size_t)left : CHUNK;
    ok = fread(buf, sizeof *buf, want, f->file) == want;
    for (size_t k = 0; ok && k < want; k++)
      if (!measured_only || buf[k].measured > 0)
        fn(ctx, &buf[k]);
    left -= ok ? want : 0;
  }
  g_free(buf);
  if (!ok)
    g_set_error(error, WISP_ERROR, WISP_ERROR_IO, "cannot read back the run's communication records from the "
                "temporary file in %s: %s", f->file_dir, ferror(f->file) ? g_strerror(errno) : "it is shorter "
                "than written");
  /* The next writer (none after the run) would start at the end. */
  fseek(f->file, 0, SEEK_END);
  return ok;
}

gboolean sim_comms_foreach(const sim_result *r, gboolean measured_only, sim_comms_fn fn, void *ctx,
                           GError **error)
{
  const sim_comms *f = r->comm_fold;
  if (f == NULL || f->file == NULL) {
    for (guint k = 0; r->comms != NULL && k < r->comms->len; k++) {
      const sim_comm_record *c = &g_array_index(r->comms, sim_comm_record, k);
      if (!measured_only || c->measured > 0)
        fn(ctx, c);
    }
    return TRUE;
  }
  g_assert(measured_only || f->keep == SIM_COMMS_FILE);
  return foreach_file(f, measured_only, fn, ctx, error);
}
