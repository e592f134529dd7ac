/*
 * codes.h - the finding codes, in one table: each code once, with its
 * default severity and what it means (advisorctl(1), "FINDING CODES", and
 * doc/interfaces.md, "Finding codes", list the same codes; test_codes.c
 * fails where they disagree).
 *
 * Code names a finding by its enum (ADV_CODE_MEM_OVER_CAPACITY), so a code
 * that is not in this table does not compile; the wire, the JSON output and
 * the decision log carry the string (findings.c, engine_code_name()).  The
 * codes are a contract: add one here, in the man page with an example and
 * in doc/interfaces.md; never rename one.
 *
 * X(name, default severity, meaning): the severity is the one the code
 * mostly has; the few places that give another say so
 * (engine_add_finding_sev()).  A meaning is one line of plain text.
 */
#ifndef ADVISOR_ENGINE_CODES_H
#define ADVISOR_ENGINE_CODES_H

#define ADV_CODES(X) \
	X(GPU_COUNT_MISMATCH, REJECT, \
	  "The GPU count does not equal TP x PP x CP x DP, or DP cannot be derived.") \
	X(GPU_TYPE_UNKNOWN, WARN, \
	  "The GPU type is not in the catalog and the partition names none; memory is not checked.") \
	X(MODEL_UNKNOWN, REJECT, \
	  "The model is not in the catalog; info when the name was read from the job itself.") \
	X(SCRIPT_CONFLICT, WARN, \
	  "An --llm-* option disagrees with the job's own configuration (the option wins), or two parts of the job's configuration disagree.") \
	X(SCRIPT_UNKNOWN, INFO, \
	  "A value the job states is not known before it runs; the fix names the option that supplies it.") \
	X(SCRIPT_CONFIG_ERROR, INFO, \
	  "A config file the job names is bad or truncated (file:line:column); the rest is judged.") \
	X(SCRIPT_ASSUMED, INFO, \
	  "A default the job reader took where the job does not say.") \
	X(SCRIPT_NOT_FOLLOWED, WARN, \
	  "The script names a launcher or trainer the reader did not reach or could not follow; the policy sets the severity.") \
	X(SCRIPT_TRUNCATED, WARN, \
	  "The batch script was read in part: what came after was not checked.") \
	X(CKPT_STEPS, INFO, \
	  "The job checkpoints every N steps: the interval in time at the estimated step time.") \
	X(WORLD_SIZE_MISMATCH, REJECT, \
	  "The launch starts more processes than the job has GPUs, or on other nodes than the job (or its Slurm step) has.") \
	X(MODEL_NOT_GIVEN, INFO, \
	  "No model: only resources are checked.") \
	X(NO_GPUS, WARN, \
	  "A model was given but the job asks for no GPUs.") \
	X(TP_NOT_DIVIDE_HEADS, REJECT, \
	  "The tensor-parallel size does not divide the attention heads.") \
	X(TP_NOT_DIVIDE_KV_HEADS, REJECT, \
	  "TP neither divides the KV heads nor is a multiple of them (GQA).") \
	X(TP_NOT_DIVIDE_FFN, REJECT, \
	  "TP does not divide the MLP hidden size.") \
	X(TP_CROSSES_NODE, WARN, \
	  "A tensor-parallel group spans nodes (TP above the GPUs per node).") \
	X(PP_UNEVEN_LAYERS, WARN, \
	  "The layers do not split evenly over the pipeline stages; info when embedding and loss even it out.") \
	X(EP_NOT_DIVIDE_EXPERTS, REJECT, \
	  "The expert-parallel size does not divide the routed experts.") \
	X(EP_GRID_NOT_DIVIDE_GPUS, REJECT, \
	  "The expert grid (EP x ETP) does not divide the GPUs.") \
	X(CP_SEQ_NOT_DIVISIBLE, REJECT, \
	  "The sequence does not split evenly into 2 x CP chunks.") \
	X(GBS_NOT_DIVISIBLE, REJECT, \
	  "The global batch is not a multiple of micro-batch x DP.") \
	X(VPP_INVALID, REJECT, \
	  "Interleaved stages without a pipeline, or layers not divisible by PP x VPP.") \
	X(ZERO_WITH_PIPELINE, REJECT, \
	  "DeepSpeed's pipeline engine with ZeRO stage 2 or 3.") \
	X(PIPELINE_BUBBLE, WARN, \
	  "The pipeline bubble exceeds the policy's max_pipeline_bubble.") \
	X(MEM_OVER_CAPACITY, REJECT, \
	  "Even the least memory per GPU the job can take exceeds the usable memory; a warning when only the estimate with advisor's assumptions does.") \
	X(MEM_LOW_HEADROOM, WARN, \
	  "It fits, but within the policy's warn_headroom of the usable memory.") \
	X(KV_CAPACITY_LOW, WARN, \
	  "Serving: fewer than max(1, mbs) sequences of seq tokens fit in the KV cache.") \
	X(SEQ_EXCEEDS_MAX, WARN, \
	  "The sequence is longer than the model's max_seq.") \
	X(SP_OFF_WITH_TP, WARN, \
	  "Tensor parallelism without sequence parallelism keeps full activations on every rank.") \
	X(GPUS_IDLE, WARN, \
	  "Some of the job's GPUs would hold no part of the model, or no process of the launch.") \
	X(CKPT_MISSING, WARN, \
	  "A job above the policy's require_above_gpus declares no checkpoint interval.") \
	X(CKPT_TOO_LONG, WARN, \
	  "The interval wastes more than the optimum by warn_extra_waste; reject past reject_extra_waste.") \
	X(CKPT_TOO_SHORT, WARN, \
	  "Checkpointing so often that writing costs more than the optimum by the same thresholds.") \
	X(CKPT_WRITE_EXCEEDS_INTERVAL, REJECT, \
	  "A synchronous checkpoint takes longer to write than the interval.") \
	X(POLICY_MAX_GPUS, REJECT, \
	  "The job asks for more GPUs than the partition's max_gpus.") \
	X(POLICY_MODE_OVERRIDE_DENIED, REJECT, \
	  "--llm-advisor was given where the policy does not let users choose.") \
	X(VALUE_REQUIRED, REJECT, \
	  "The site policy requires the job to state a setting (require:) that it leaves unstated.") \
	X(FP8_UNSUPPORTED, REJECT, \
	  "fp8 precision on a GPU without fp8 tensor cores.") \
	X(BEST_PLAN, WARN, \
	  "On a rejected job: the fastest layout for the same model and GPUs that passes every rule.") \
	X(STEP_SUBSET, INFO, \
	  "The launch runs in a Slurm step on part of the job's nodes: it is judged against that part.") \
	X(PARTITION_GPUS_DIFFER, WARN, \
	  "The partitions of a -p list have different GPU types: the job is judged on the first listed partition's.") \
	X(PARENT_UNCONFIRMED, INFO, \
	  "On the node: advisord's log does not vouch for the job's ADVISOR_DECISION_ID (not the user's, a rejected submission, made for another script, or used by another job), so its script was judged on the node.") \
	X(PROGRAM_NOT_READ, INFO, \
	  "The job runs a program of its own that the reader could not read: its workload is unknown, not checked.") \
	X(RANK_EXPANDED_ONCE, REJECT, \
	  "The batch shell expands a rank or node rank once, so every node or task of the launch starts as the same rank.") \
	X(NODELIST_SPLIT, REJECT, \
	  "srun -w/-x is given host names one a line: unquoted they split into its arguments (a host name run as its program); quoted, srun 22.05 refuses them.")

enum adv_code {
#define ADV_CODE_ENUM(name, sev, meaning) ADV_CODE_##name,
	ADV_CODES(ADV_CODE_ENUM)
#undef ADV_CODE_ENUM
	ADV_CODE_COUNT
};

#endif
