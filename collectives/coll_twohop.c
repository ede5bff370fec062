/* coll_twohop.c: DeepEP's internode all-to-all as the two-hop pattern it
 * is (doc/kineto.md, "Two-hop MoE traffic").
 *
 * DeepEP's normal internode dispatch sends each token over RDMA (the
 * scale-out tier) once per destination node, to the GPU with the same local
 * index on that node, which forwards it over NVLink (the scale-up tier) to
 * the destination GPUs of its node; combine is the reverse: the experts'
 * GPUs of a node gather their outputs over NVLink at the GPU with the
 * token owner's local index, which sends the reduced result over RDMA to
 * the owner.  Given the flat per-member split matrix S (bytes from member
 * a to member b, as the frontend computes for a flat all_to_allv) and the
 * scale-out deduplication ratio rho (coll_desc.two_hop_ppm / 1e6):
 *
 *   dispatch, a -> node m != node(a), relay r = (m, local(a)):
 *     hop 1 (scale-out)  a -> r   rho x sum_{b in m} S[a][b] bytes;
 *     hop 2 (scale-up)   r -> b   S[a][b] for every b in m, b != r,
 *                                 started when hop 1 has arrived;
 *   combine, owner b, node m != node(b), relay r = (m, local(b)):
 *     hop 1 (scale-up)   a -> r   S[a][b] for every a in m, a != r;
 *     hop 2 (scale-out)  r -> b   rho x sum_{a in m} S[a][b] bytes,
 *                                 started when every hop 1 of (m, b) has
 *                                 arrived (per node pair granularity);
 *   same node: a -> b directly (scale-up), S[a][b] bytes.
 *
 * With the policy's chunks C > 1 (collectives.chunks) each per node pair
 * first hop is cut into C pieces sent one after the other (each paying its
 * route latency), and piece i of the second hop(s) starts when piece i of
 * the first has arrived (for combine: from every sender of the node), as
 * DeepEP streams tokens in chunks; C = 1 (the default) forwards whole
 * hops.
 *
 * Every transfer is one net_send, so both fidelity tiers (analytical and
 * flow) time it, with the route latency of its tier's links and the
 * contention of everything else in flight.  A member has finished when
 * every transfer it sends, relays or receives has arrived.  The run carries
 * no communication-library cost (DeepEP is not NCCL): only the network.
 *
 * Nodes are the topology's node structure (topo_node_dims: ranks that
 * differ only in the inner tiers share a node); without one (an explicit
 * graph, or a single tier) or when a relay (same local index on another
 * node) is not a member of the group, coll_twohop_start returns FALSE and
 * the caller runs the flat all-to-all.
 *
 * Cost: O(n^2 x C) to plan (n members), one net_send per planned transfer
 * (at most (n^2 + n x nodes) x C), O(1) per arrival plus the sends it
 * starts.
 */
#include "config.h"

#include <string.h>

#include "collectives/coll_internal.h"

typedef struct {
  int src, dst;            /* members (indices into ranks) */
  uint64_t bytes;
  int gate_out;            /* gate opened (decremented) on arrival, -1 none */
  int next;                /* the next piece of a chunked hop, sent on arrival; -1 none */
  gboolean head;           /* sent at the start (not behind a gate or an earlier piece) */
} th_xfer;

typedef struct {
  int left;                /* arrivals still needed */
  int first, n;            /* dependent transfers, contiguous in xf[] */
} th_gate;

struct coll_twohop {
  sim_engine *sim;
  net *n;
  GHashTable *live;        /* the runtime's set of unfinished runs */
  int *ranks;
  int n_ranks;
  th_xfer *xf;
  int n_xf;
  th_gate *gate;
  int n_gates;
  int *pending;            /* per member: transfers not yet arrived */
  int members_left;
  coll_done_fn done;
  void *ctx;
  uint64_t cookie;
};

void coll_twohop_free(coll_twohop *h)
{
  if (h == NULL)
    return;
  g_free(h->ranks);
  g_free(h->xf);
  g_free(h->gate);
  g_free(h->pending);
  g_free(h);
}

/* Node and local index of a rank: the linear index of its coordinates in
 * the outer (node) and inner (local) tiers.  O(dims). */
static void node_local(const topo *t, int nd, int rank, int *node, int *local)
{
  int nn = 0, ll = 0, dims = topo_n_dims(t);
  for (int d = dims - 1; d >= 0; d--) {
    int c = topo_rank_coord(t, rank, d), sz = topo_dim_size(t, d);
    if (d >= nd)
      nn = nn * sz + c;
    else
      ll = ll * sz + c;
  }
  *node = nn;
  *local = ll;
}

static void member_finished(coll_twohop *h, int m)
{
  h->done(h->sim, h->ctx, h->cookie, m);
  if (--h->members_left == 0)
    g_hash_table_remove(h->live, h); /* frees h */
}

static void on_arrival(sim_engine *sim, void *ctx, uint64_t cookie);

static void send_xfer(coll_twohop *h, int i)
{
  const th_xfer *x = &h->xf[i];
  net_send(h->n, h->ranks[x->src], h->ranks[x->dst], x->bytes, on_arrival, h, (uint64_t)i);
}

static void on_arrival(sim_engine *sim, void *ctx, uint64_t cookie)
{
  (void)sim;
  coll_twohop *h = ctx;
  const th_xfer *x = &h->xf[cookie];
  int src = x->src, dst = x->dst;
  if (x->next >= 0)
    send_xfer(h, x->next);
  if (x->gate_out >= 0) {
    th_gate *g = &h->gate[x->gate_out];
    if (--g->left == 0)
      for (int k = 0; k < g->n; k++)
        send_xfer(h, g->first + k);
  }
  /* h is freed by the last member to finish; a transfer has two distinct
   * members, so h is still alive for the second call. */
  gboolean last_src = --h->pending[src] == 0;
  gboolean last_dst = --h->pending[dst] == 0;
  if (last_src)
    member_finished(h, src);
  if (last_dst)
    member_finished(h, dst);
}

static void on_begin(sim_engine *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  coll_twohop *h = ctx;
  /* Members without any transfer finish at once; the others when their
   * last transfer arrives.  Count first: finishing may free h. */
  int n = h->n_ranks, idle = 0;
  for (int m = 0; m < n; m++)
    idle += h->pending[m] == 0;
  for (int i = 0; i < h->n_xf; i++)
    if (h->xf[i].head)
      send_xfer(h, i);
  /* Gates with nothing to wait for (combine: the relay is the only member
   * of its node holding data for the owner) open now. */
  for (int g = 0; g < h->n_gates; g++)
    if (h->gate[g].left == 0)
      for (int k = 0; k < h->gate[g].n; k++)
        send_xfer(h, h->gate[g].first + k);
  for (int m = 0; m < n && idle > 0; m++)
    if (h->pending[m] == 0) {
      idle--;
      member_finished(h, m); /* may free h when every member is idle */
    }
}

static uint64_t scaled(uint64_t bytes, uint32_t ppm)
{
  /* bytes x ppm / 1e6, rounded, without overflow for any uint64 bytes. */
  uint64_t q = bytes / 1000000u, r = bytes % 1000000u;
  return q * ppm + (r * ppm + 500000u) / 1000000u;
}

typedef struct {
  GArray *xf;              /* th_xfer */
  GArray *gates;           /* th_gate */
  GArray *second;          /* th_xfer: the gates' dependents, appended after xf */
  int chunks;              /* pieces of each per node pair hop */
} th_plan;

static uint64_t piece(uint64_t bytes, int i, int c)
{
  /* Piece i of c of `bytes`: the pieces differ by at most one byte and
   * sum to bytes.  bytes < 2^64 / 1024 in practice (c <= 1024). */
  return bytes * (uint64_t)(i + 1) / (uint64_t)c - bytes * (uint64_t)i / (uint64_t)c;
}

/* One hop of `bytes` from src to dst cut into the plan's pieces, each sent
 * when the previous one has arrived; piece i opens gate gate0 + i (gate0
 * -1: none).  head: the first piece starts at once. */
static void add_chain(th_plan *p, int src, int dst, uint64_t bytes, int gate0, gboolean head)
{
  int c = p->chunks;
  int base = (int)p->xf->len;
  for (int i = 0; i < c; i++) {
    th_xfer x = { src, dst, piece(bytes, i, c), gate0 >= 0 ? gate0 + i : -1, i + 1 < c ? base + i + 1 : -1,
                  head && i == 0 };
    g_array_append_val(p->xf, x);
  }
}

/* A dependent of the gate being built: sent when its gate opens. */
static void add_second(th_plan *p, int src, int dst, uint64_t bytes)
{
  th_xfer x = { src, dst, bytes, -1, -1, FALSE };
  g_array_append_val(p->second, x);
}

static void open_gate_group(th_plan *p, int left)
{
  th_gate g = { left, (int)p->second->len, 0 };
  g_array_append_val(p->gates, g);
}

static void close_gate(th_plan *p)
{
  th_gate *g = &g_array_index(p->gates, th_gate, p->gates->len - 1);
  g->n = (int)p->second->len - g->first;
}

/* The transfers of one run: the direct intra-node pairs (whole, at once),
 * the first hops as chains of pieces, then each gate's dependents
 * contiguously.  Piece i of the hop of one (member, node) pair opens gate
 * i of that pair; its dependents are piece i of the second hop(s).
 * mem_of[node * n_local + local] = member or -1.  O(n^2 x chunks). */
static void plan(th_plan *p, const coll_desc *d, const int *node, const int *local, const int *mem_of, int n_local,
                 int n_nodes)
{
  int n = d->n_ranks, c = p->chunks;
  const uint64_t *S = d->splits;
  gboolean dispatch = d->two_hop == COLL_TWO_HOP_DISPATCH;
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++)
      if (a != b && node[a] == node[b] && S[(size_t)a * n + b] > 0) {
        th_xfer x = { a, b, S[(size_t)a * n + b], -1, -1, TRUE };
        g_array_append_val(p->xf, x);
      }
  for (int a = 0; a < n; a++)
    for (int m = 0; m < n_nodes; m++) {
      if (m == node[a])
        continue;
      /* dispatch: a is the source, r = (m, local(a)); combine: a is the
       * owner, r = (m, local(a)) gathers from the members of m. */
      int r = mem_of[m * n_local + local[a]];
      if (r < 0)
        continue; /* node m holds no member of the group */
      uint64_t sum = 0;
      int senders = 0;
      for (int b = 0; b < n; b++)
        if (node[b] == m) {
          uint64_t v = dispatch ? S[(size_t)a * n + b] : S[(size_t)b * n + a];
          sum += v;
          senders += b != r && v > 0;
        }
      if (sum == 0)
        continue;
      int gate0 = (int)p->gates->len;
      if (dispatch) {
        add_chain(p, a, r, scaled(sum, d->two_hop_ppm), gate0, TRUE);
        for (int i = 0; i < c; i++) {
          open_gate_group(p, 1);
          for (int b = 0; b < n; b++)
            if (node[b] == m && b != r && S[(size_t)a * n + b] > 0)
              add_second(p, r, b, piece(S[(size_t)a * n + b], i, c));
          close_gate(p);
        }
      } else {
        for (int b = 0; b < n; b++)
          if (node[b] == m && b != r && S[(size_t)b * n + a] > 0)
            add_chain(p, b, r, S[(size_t)b * n + a], gate0, TRUE);
        uint64_t out = scaled(sum, d->two_hop_ppm);
        for (int i = 0; i < c; i++) {
          open_gate_group(p, senders);
          add_second(p, r, a, piece(out, i, c));
          close_gate(p);
        }
      }
    }
  /* Dependents after the first hops: shift the gates' indices. */
  int base = (int)p->xf->len;
  for (guint i = 0; i < p->gates->len; i++)
    g_array_index(p->gates, th_gate, i).first += base;
  g_array_append_vals(p->xf, p->second->data, p->second->len);
}

gboolean coll_twohop_start(sim_engine *sim, net *nw, GHashTable *live, const coll_desc *d, int chunks,
                           coll_done_fn done, void *ctx, uint64_t cookie, coll_info *info)
{
  const topo *t = net_get_topo(nw);
  if (d->two_hop == COLL_TWO_HOP_NONE || d->type != ET_COLL_ALL_TO_ALLV || d->splits == NULL)
    return FALSE;
  if (topo_is_graph(t) || topo_n_dims(t) < 2 || topo_node_dims(t) >= topo_n_dims(t))
    return FALSE; /* no node structure: one tier */
  int nd = topo_node_dims(t), n = d->n_ranks;
  int n_local = 1, n_nodes = 1;
  for (int k = 0; k < topo_n_dims(t); k++) {
    if (k < nd)
      n_local *= topo_dim_size(t, k);
    else
      n_nodes *= topo_dim_size(t, k);
  }
  int *node = g_new(int, 2 * (size_t)n);
  int *local = node + n;
  int *mem_of = g_new(int, (size_t)n_nodes * (size_t)n_local);
  for (size_t i = 0; i < (size_t)n_nodes * (size_t)n_local; i++)
    mem_of[i] = -1;
  for (int a = 0; a < n; a++) {
    node_local(t, nd, d->ranks[a], &node[a], &local[a]);
    mem_of[node[a] * n_local + local[a]] = a;
  }
  /* Every relay must be a member: for each member a and each node m that
   * holds a member, (m, local(a)) is one. */
  gboolean *has = g_new0(gboolean, (size_t)n_nodes);
  for (int a = 0; a < n; a++)
    has[node[a]] = TRUE;
  gboolean ok = TRUE;
  int used_nodes = 0;
  for (int m = 0; m < n_nodes; m++)
    used_nodes += has[m];
  for (int a = 0; a < n && ok; a++)
    for (int m = 0; m < n_nodes && ok; m++)
      if (has[m] && mem_of[m * n_local + local[a]] < 0)
        ok = FALSE;
  g_free(has);
  if (!ok || used_nodes < 2) {
    g_free(node);
    g_free(mem_of);
    return FALSE;
  }
  th_plan p = { g_array_new(FALSE, FALSE, sizeof(th_xfer)), g_array_new(FALSE, FALSE, sizeof(th_gate)),
                g_array_new(FALSE, FALSE, sizeof(th_xfer)), CLAMP(chunks, 1, 1024) };
  plan(&p, d, node, local, mem_of, n_local, n_nodes);
  g_array_free(p.second, TRUE);
  g_free(node);
  g_free(mem_of);

  coll_twohop *h = g_new0(coll_twohop, 1);
  h->sim = sim;
  h->n = nw;
  h->live = live;
  h->ranks = g_memdup2(d->ranks, sizeof(int) * (size_t)n);
  h->n_ranks = n;
  h->n_xf = (int)p.xf->len;
  h->xf = (th_xfer *)(void *)g_array_free(p.xf, FALSE);
  h->n_gates = (int)p.gates->len;
  h->gate = (th_gate *)(void *)g_array_free(p.gates, FALSE);
  h->pending = g_new0(int, (size_t)n);
  for (int i = 0; i < h->n_xf; i++) {
    h->pending[h->xf[i].src]++;
    h->pending[h->xf[i].dst]++;
  }
  h->members_left = n;
  h->done = done;
  h->ctx = ctx;
  h->cookie = cookie;
  g_hash_table_add(live, h);
  if (info != NULL) {
    memset(info, 0, sizeof *info);
    info->algo = COLL_ALGO_HIERARCHICAL;
    info->nccl_algo = -1;
    info->proto = -1;
    g_snprintf(info->detail, sizeof info->detail, "two-hop %s: %d nodes x %d, scale-out dedup %.4f, %d chunk%s",
               d->two_hop == COLL_TWO_HOP_DISPATCH ? "dispatch (scale-out > scale-up)"
                                                   : "combine (scale-up > scale-out)",
               used_nodes, n / used_nodes, d->two_hop_ppm / 1e6, p.chunks, p.chunks == 1 ? "" : "s");
  }
  sim_post_after(sim, 0, on_begin, h, 0);
  return TRUE;
}
