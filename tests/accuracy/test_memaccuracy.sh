#!/bin/sh
# test_memaccuracy.sh - the memory estimate against what GPUs measured
# (issue 19; tests/accuracy/memaccuracy.c, data in memory-measured.json and
# the hold-out memory-heldout.json).
#
# The floors are what the engine achieves today, so that the memory model
# cannot regress; raise them as it improves.  The targets are 90% of
# serving rows within 10% (weights) and 15% (KV tokens), and 85% of training
# rows within 15%; the hold-out's "done" bar is 95% / 85% / 80%.
# Issue 19 start: measured 1/2 weights, 0/1 KV (2 rows have no catalog
# GPU), 3/30 training; hold-out 1/1, 0/1, 1/5.  With the logits and loss
# costed as the frameworks keep them and the gradient dtypes read (issue 19
# items 6-7), training is 2/30: the torchtitan 8B-to-70B CP and 2D rows come
# closer (0.54 -> 0.82, 0.51 -> 0.68), while the 8B FSDP rows with
# selective checkpointing, over before, move further over (1.13 -> 1.27):
# their selective-checkpointing activations (item 8) are the term to fix,
# not the loss.
# With FSDP2 under pipeline parallelism (unsharded parameters and fp32
# gradients kept over the micro-batches), torchtitan's per-op selective
# checkpointing modelled op by op, and the caching allocator's margin on the
# rows that measured reserved memory (issue 19 items 8 and 10), training is
# 12/30 and the hold-out 3/5: 405B 3D 0.22 -> 0.68 (1F1B), 0.25 -> 0.77
# (interleaved); 405B 4D 0.41 -> 0.91/0.90, 0.36 -> 0.80; 8B FSDP selective
# 1.27/1.36 -> 0.89/0.95/0.96, 1.33/1.44 -> 0.85/0.92; 8B CP 0.82 -> 0.86;
# 70B 2D 0.68/0.72 -> 0.71/0.75.
# Serving pool as vLLM and SGLang size it (items 1-3): the vLLM Qwen3-235B
# FP8 KV row 5.16 -> 1.90 (KV in bf16, not the weights' fp8; the 0.9 pool;
# sampler and non-torch memory), still over: the log's 8.11 GiB leaves
# about 8 GiB unexplained by the profile run; the SGLang hold-out row
# 2.53 -> 1.12 (within 15%).  Llama 3.1 405B FP8 weights 0.82 -> 0.83:
# Meta's checkpoint keeps attention and the first and last layers' MLPs in
# bf16 (modules_to_not_convert), which the catalog cannot say yet.
# Both together (tied embeddings counted once as well): training 13/30,
# hold-out 1/1 weights, 1/1 KV, 4/5 training.
# Serving rows collected (issue 19 item 1-3 evidence): hold-out first
# (gpt-oss-120b MXFP4 weights 3.38 before the checker read the row's
# quantization, 0.94 after; Llama 2 70B TP4 KV blocks 1.53, still over:
# vLLM PR 2031's profile counts about 14 GiB of non-torch memory per GPU
# at TP 4 in that version, which the engine's 0.6 GiB does not have), then
# the measured set; the RTX 3090 in the catalog gives the issue 10517 rows
# an engine figure, and the serving activations as the profile run's MLP
# working set (4h + 6F/t per token, memory.c) bring them to 1.02 / 1.05
# (they were 1.24 / 1.64 with the training coefficient and the 8K default
# chunk instead of V0's whole-context profile run).  Measured: weights 4/5,
# KV 3/4; hold-out weights 2/2, KV 1/2.
# Four Megatron-LM CI golden values added to the hold-out before any
# further change to the model (tp2 pp2, tp1 pp2 rope, tp1 pp4 vp3 with the
# distributed optimizer, all with --attention-backend unfused; tp2 pp2 cp2
# with flash): 0.65, 0.69, 0.49, 0.87, so the hold-out is 5/9 training
# (the floor drops to that until the model improves).
# Five more Megatron-LM CI golden values in the measured set (tp4 dist
# optimizer, tp1 pp4 without linear biases, tp1 pp2 cp4, and two with the
# local transformer implementation): 0.47, 0.78, 0.97, 0.50, 0.68, so
# training is 14/35 (floor 0.40).  Each Megatron row now says its
# attention backend (--attention-backend; the local implementation's
# attention is unfused).
# Megatron-Core's interleaved schedule as it runs (schedules.py
# get_pp_rank_microbatches: the last rank holds (v-1) p + 1 chunks, rank 0
# all of them when m = p), each Megatron row costed on the rank it was
# measured on (the last stage, not the most loaded one), unfused attention
# keeping its scores, sequence parallelism and the MLP as each row states
# them (the "gelu (no --swiglu ...)" rows were read as SwiGLU before):
# training 27/35, hold-out 8/9.  MEG-7B-TP1PP4 1.21 -> 0.99; MEG-7B-TP4PP1
# 0.87/0.85 -> 0.98/0.96; MEG-S 0.47-0.97 -> 0.84-0.99; the four hold-out
# rows added above 0.65/0.69/0.49/0.87 -> 0.95/0.97/0.97/0.87.
# Issue 29: 67 more published rows (36 serving, 31 training), each with
# its "source", split by source before any was scored (sha1 of the source
# name; the 32 llm-d-planner vLLM 0.19 logs, one repository, by model
# family): 22 serving + 5 training to the measured set, 14 + 8 to the
# hold-out; 13 Megatron-LM release-test rows whose GPU count is not
# published (their data-parallel size, hence the distributed optimizer's
# shard, is unknown) are kept in memory-unscored.json and reported only.
# Changes, each from the frameworks' code: torchtitan's older pipeline
# micro-batch COUNT (default the PP degree: 405B 3D 0.68 -> 0.83, 0.77 ->
# 0.97), torch's loss peak in the backward (12 B per logit), vLLM's batch
# defaults by GPU (max_num_seqs 1024 on GPUs of 70 GiB or more that are not
# A100s), the profile run's peak as the larger of the forward pass and the
# sampler (vLLM 0.19 logs "peak activation" 15 B x max_num_seqs x vocab),
# and NCCL's NVLS buffers at TP >= 2 on NVLink-4 switches (1.85 GiB, vLLM
# 0.19's own non-torch accounting).  Result: measured weights 15/16, KV
# 12/15, training 30/40; hold-out weights 9/9, KV 6/9, training 10/22.
# Then 21 BigScience rows (16 to 384 GPUs; 8 measured, 13 hold-out), the
# allocator margin from 13 published reserved/allocated pairs (15%), fp16
# rows read as fp16 and the optimizer step's fp32 copy of 16-bit gradients
# (Megatron, DeepSpeed): measured training 40/48, hold-out 18/35.  The
# issue's targets (95% / 85% / 80%) are met for measured training only:
# see the README.
set -eu
acc=${MEMACCURACY:-./memaccuracy}
data=${ACCURACY_DATA:-.}
"$acc" --min-weights "${MEM_MIN_WEIGHTS:-0.93}" --min-kv "${MEM_MIN_KV:-0.80}" \
	--min-train "${MEM_MIN_TRAIN:-0.83}" "$data/memory-measured.json"
"$acc" --min-weights "${MEM_MIN_HELDOUT_WEIGHTS:-1.0}" --min-kv "${MEM_MIN_HELDOUT_KV:-0.66}" \
	--min-train "${MEM_MIN_HELDOUT_TRAIN:-0.51}" "$data/memory-heldout.json"
# Rows that cannot be scored (GPU count unknown): printed, never judged.
"$acc" "$data/memory-unscored.json" >/dev/null
# Rows measured on a GPU by gpu/measure.py (measured-<gpu>.json, committed
# with the PyTorch version): compared with the engine and reported; their
# floor (MEM_MIN_GPU_TRAIN, default 0) is raised once a set is committed.
for f in "$data"/measured-*.json; do
	[ -f "$f" ] || continue
	"$acc" --min-train "${MEM_MIN_GPU_TRAIN:-0}" "$f"
done
