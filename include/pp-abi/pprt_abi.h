/* The constants of the pprt ABI that the compiler emits and the runtime checks.
 */
#ifndef PP_ABI_PPRT_ABI_H
#define PP_ABI_PPRT_ABI_H

/*
 * Plain C, no includes: pp's conversions to runtime calls (lib/Conversion)
 * and the runtime's public header (runtime/include/pprt/pprt.h) both include
 * this file, so neither reaches into the other's tree. The functions of the
 * ABI are declared in pprt.h; their arguments take these values.
 */

#ifdef __cplusplus
extern "C" {
#endif

/* What a buffer holds; decides its slot count, init and lifetime. */
typedef enum pprt_buffer_kind {
  /* Persistent weights of a stage, deterministically initialised (or from
     --init-weights). */
  PPRT_PARAM = 0,
  /* Persistent gradient accumulator of the PARAM with the same `index`;
     zeroed at the start of every step. */
  PPRT_PARAM_GRAD = 1,
  /* Training data for model argument `index`; one slot per micro-batch,
     dims are the micro-batch shape (dim 0 = rows). Refilled every step. */
  PPRT_INPUT = 2,
  PPRT_TARGET = 3,
  /* Per-micro-batch scratch (activations, gradients, saved values); zero
     initialised once, reused across steps. */
  PPRT_MICROBATCH = 4,
  /* Per-micro-batch scalar loss (1 element). */
  PPRT_LOSS = 5,
  /* Scalar constant 1.0 seeding the backward pass; the total loss is the
     SUM of the micro-batch losses. Persistent. */
  PPRT_LOSS_GRAD = 6,
  /* Persistent non-trained state of the step argument `index` (batch
     norm's running statistics): never optimized nor all-reduced, each
     data-parallel replica updates its own. Zero initialised (or from
     --init-weights and --resume as `state<index>`); written by --save and
     checkpoints from replica 0. pprt_update_state replaces it after each
     forward that computes its new value. */
  PPRT_STATE = 7,
} pprt_buffer_kind;

/* Element types of buffers and of GEMM operands. Buffers of every type
   are allocated, zeroed and transferred by their element size; the data
   generator, the optimizer, gradient sums, all-reduces and the loss
   compute on f32 only so far and abort with the buffer, its stage and its
   type otherwise. */
typedef enum pprt_dtype {
  PPRT_F32 = 0,
  PPRT_F16 = 1,
  PPRT_BF16 = 2,
  PPRT_I32 = 3,
  PPRT_I64 = 4,
  PPRT_I1 = 5, /* one byte per element (0 or 1), as LLVM stores i1 */
} pprt_dtype;

/* What a packed-training input holds beside the token ids
   (pprt_set_packed_input; docs/VariableLength.md "Cross-document masks"):
   per row and position, the index of the token's document in its row
   (padding its own), or the token's position within its document. */
typedef enum pprt_packed_input {
  PPRT_PACKED_NONE = 0,
  PPRT_DOCUMENT_IDS = 1,
  PPRT_POSITION_IDS = 2,
} pprt_packed_input;

/* How pprt_tp_all_reduce combines the group's tensors, element-wise. */
typedef enum pprt_reduction {
  PPRT_REDUCE_SUM = 0,
  PPRT_REDUCE_MAX = 1,
  PPRT_REDUCE_MIN = 2,
} pprt_reduction;

/* The version of this ABI. The generated object passes the version it was
   compiled against to pprt_set_program, and a runtime of another version
   refuses to start: any change to a pprt_* signature or to the meaning of
   an argument bumps it. Date-stamped (YYYYMMDD) so that no older object's
   first pprt_set_program argument (a rank count) can pass for it. */
#define PPRT_ABI_VERSION 20261207

/* The highest rank of a buffer (pprt_define_buffer's `ndims`). */
#define PPRT_MAX_DIMS 6

/* The phase of a compute action; the values are those of pp's `#pp.phase`. */
typedef enum pprt_phase {
  PPRT_FORWARD = 0,
  PPRT_BACKWARD_INPUT = 1,  /* B: gradient of the stage's inputs */
  PPRT_BACKWARD_WEIGHT = 2, /* W: gradient of the stage's weights */
  PPRT_BACKWARD = 3,        /* B and W fused */
} pprt_phase;

/* What a transfer carries; only used in diagnostics. */
typedef enum pprt_transfer_kind {
  PPRT_ACTIVATION = 0,
  PPRT_GRADIENT = 1,
} pprt_transfer_kind;

#ifdef __cplusplus
}
#endif

#endif /* PP_ABI_PPRT_ABI_H */
