/* Point-to-point transfers of the generated ABI. */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>

static const char *transfer_name(int32_t kind) {
  switch (kind) {
  case PPRT_ACTIVATION:
    return "activation";
  case PPRT_GRADIENT:
    return "gradient";
  default:
    return "data";
  }
}

/* Where one transfer goes: the local slot and the remote endpoint. */
typedef struct endpoint {
  pprt_buffer_desc *b;
  int32_t slot;
  int32_t world_peer;
  int32_t tag;
} endpoint;

static endpoint resolve(pprt_context *ctx, const char *op, int32_t id,
                        int32_t mb, int32_t peer) {
  endpoint e;
  e.b = pprt_lookup(ctx, id);
  e.slot = pprt_slot_index(ctx, e.b, id, mb);
  if (peer < 0 || peer >= ctx->num_ranks)
    pprt_fatal(ctx, "%s of buffer %d: peer rank %d out of range 0..%d", op, id,
               peer, ctx->num_ranks - 1);
  /* Peers are pipeline ranks of the caller's own replica and tp index. */
  e.world_peer = pprt_world_rank_of(ctx, peer);
  int64_t tag = (int64_t)id * ctx->num_microbatches + e.slot;
  if (tag > ctx->transport->max_tag)
    pprt_fatal(ctx,
               "%s of buffer %d micro-batch %d: tag %lld exceeds the "
               "transport's limit %lld",
               op, id, mb, (long long)tag, (long long)ctx->transport->max_tag);
  e.tag = (int32_t)tag;
  return e;
}

/* pprt_reserve_one, ending the job with `what` named on failure. */
static void *reserve_one(pprt_context *ctx, void *array, int32_t *cap,
                         int32_t count, size_t size, const char *what) {
  void *p = pprt_reserve_one(array, cap, count, size);
  if (!p)
    pprt_fatal(ctx, "out of memory tracking %s", what);
  return p;
}

static void push_pending(pprt_context *ctx, int32_t id, int32_t slot,
                         int32_t world_peer, int32_t handle) {
  ctx->pending = reserve_one(ctx, ctx->pending, &ctx->pending_cap,
                             ctx->num_pending, sizeof *ctx->pending, "sends");
  ctx->pending[ctx->num_pending++] = (pprt_pending_send){
      id, slot, world_peer, handle, ctx->in_group, pprt_action_step(ctx)};
}

/* Completes pending send `p`, or ends the job naming the silent rank. */
static void wait_send(pprt_context *ctx, const pprt_pending_send *p) {
  pprt_transport *t = ctx->transport;
  if (!t->ops->wait_for(t, p->handle, ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, p->world_peer,
                      "rank %d to take buffer %d (micro-batch slot %d)",
                      p->world_peer, p->id, p->slot);
}

void pprt_wait_slot_sends(pprt_context *ctx, int32_t id, int32_t slot) {
  for (int32_t i = 0; i < ctx->num_pending;) {
    pprt_pending_send *p = &ctx->pending[i];
    if (p->id != id || p->slot != slot) {
      ++i;
      continue;
    }
    /* The transport has not issued it yet: it would never complete. */
    if (p->grouped)
      pprt_fatal(ctx,
                 "buffer %d micro-batch slot %d is sent and received in "
                 "one exchange group",
                 id, slot);
    wait_send(ctx, p);
    *p = ctx->pending[--ctx->num_pending];
  }
}

void pprt_wait_all_sends(pprt_context *ctx) {
  if (!ctx->transport->ops->wait_all(ctx->transport, ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, PPRT_EVERYONE, "the step's sends to be taken");
  ctx->num_pending = 0;
}

void pprt_wait_step_sends(pprt_context *ctx, int64_t step) {
  bool carried = false;
  for (int32_t i = 0; i < ctx->num_pending; ++i)
    carried |= ctx->pending[i].step > step;
  /* wait_all invalidates every handle: only when none is carried. */
  if (!carried)
    return pprt_wait_all_sends(ctx);
  for (int32_t i = 0; i < ctx->num_pending;) {
    if (ctx->pending[i].step > step) {
      ++i;
      continue;
    }
    wait_send(ctx, &ctx->pending[i]);
    ctx->pending[i] = ctx->pending[--ctx->num_pending];
  }
}

void pprt_send(pprt_context *ctx, int32_t id, int32_t mb, int32_t peer,
               int32_t stage, int32_t kind) {
  (void)stage;
  (void)kind;
  endpoint e = resolve(ctx, "send", id, mb, peer);
  const void *data = pprt_slot_data(ctx, e.b, id, e.slot);
  if (ctx->observer.send)
    ctx->observer.send(ctx->observer.self, ctx, id, mb, peer, e.b->bytes);
  pprt_transport *t = ctx->transport;
  int32_t handle = t->ops->isend(t, data, e.b->bytes, e.world_peer, e.tag);
  push_pending(ctx, id, e.slot, e.world_peer, handle);
}

/* Keeps a receive of the open group for its end. */
static void defer_recv(pprt_context *ctx, pprt_group_recv r) {
  ctx->group = reserve_one(ctx, ctx->group, &ctx->group_cap, ctx->num_group,
                           sizeof *ctx->group, "an exchange group");
  ctx->group[ctx->num_group++] = r;
}

/* Ends the job unless a receive into buffer `id` completed. */
static void check_received(pprt_context *ctx, pprt_recv_status status,
                           int32_t id, int32_t mb, int32_t world_peer,
                           int32_t stage, int32_t kind) {
  switch (status) {
  case PPRT_RECV_OK:
    return;
  case PPRT_RECV_TIMEOUT:
    /* The end of the chain of waits from `world_peer`, which every rank
       that times out finds alike (each would blame its own neighbour). */
    pprt_fatal_silent(ctx, world_peer,
                      "%s of stage %d micro-batch %d from rank %d",
                      transfer_name(kind), stage, mb, world_peer);
  case PPRT_RECV_SIZE_MISMATCH:
    pprt_fatal(ctx,
               "%s of stage %d micro-batch %d from rank %d does not have "
               "the %lld bytes of buffer %d",
               transfer_name(kind), stage, mb, world_peer,
               (long long)pprt_lookup(ctx, id)->bytes, id);
  }
}

void pprt_group_begin(pprt_context *ctx) {
  if (ctx->in_group)
    pprt_fatal(ctx, "pprt_group_begin inside an exchange group");
  ctx->in_group = true;
  ctx->transport->ops->group_begin(ctx->transport);
}

/* Issues the group's transfers as one, in the order they were started,
   then completes its receives in that order. */
void pprt_group_end(pprt_context *ctx) {
  if (!ctx->in_group)
    pprt_fatal(ctx, "pprt_group_end without pprt_group_begin");
  pprt_transport *t = ctx->transport;
  ctx->in_group = false;
  t->ops->group_end(t);
  for (int32_t i = 0; i < ctx->num_pending; ++i)
    ctx->pending[i].grouped = false;
  for (int32_t i = 0; i < ctx->num_group; ++i) {
    pprt_group_recv r = ctx->group[i];
    check_received(ctx, t->ops->wait_recv(t, r.handle, ctx->opts.timeout_s),
                   r.id, r.mb, r.world_peer, r.stage, r.kind);
  }
  ctx->num_group = 0;
}

void pprt_recv(pprt_context *ctx, int32_t id, int32_t mb, int32_t peer,
               int32_t stage, int32_t kind) {
  endpoint e = resolve(ctx, "recv", id, mb, peer);
  void *data = pprt_slot_data(ctx, e.b, id, e.slot);
  pprt_wait_slot_sends(ctx, id, e.slot);
  if (ctx->observer.recv)
    ctx->observer.recv(ctx->observer.self, ctx, id, mb, peer, e.b->bytes);
  pprt_transport *t = ctx->transport;
  if (ctx->in_group) {
    int32_t h = t->ops->irecv(t, data, e.b->bytes, e.world_peer, e.tag);
    defer_recv(ctx, (pprt_group_recv){id, mb, e.world_peer, stage, kind, h});
    return;
  }
  check_received(ctx,
                 t->ops->recv(t, data, e.b->bytes, e.world_peer, e.tag,
                              ctx->opts.timeout_s),
                 id, mb, e.world_peer, stage, kind);
}
