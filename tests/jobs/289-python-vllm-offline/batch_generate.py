import json

from vllm import LLM, SamplingParams

llm = LLM(
    model="meta-llama/Meta-Llama-3-70B",
    tensor_parallel_size=4,
    max_model_len=8192,
    gpu_memory_utilization=0.92,
    dtype="bfloat16",
)
params = SamplingParams(temperature=0.7, max_tokens=1024)
prompts = [json.loads(l)["prompt"] for l in open("prompts.jsonl")]
for out in llm.generate(prompts, params):
    print(json.dumps({"text": out.outputs[0].text}))
