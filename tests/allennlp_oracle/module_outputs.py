"""What AllenNLP 2.10.1's modules, ``dense_sparse_adam`` and ``multi_step`` give, for
tests/modules/test_allennlp_modules.py, written to tests/allennlp_golden/modules/. Run with the oracle's Python
(built by ../shared/allennlp-oracle/setup.sh), not by pytest:

    /work/oracle/bin/python tests/allennlp_oracle/module_outputs.py

Each case is built from its config by AllenNLP's ``from_params`` (seeded), run on seeded small inputs in eval
mode, and saved as its config, its parameters by AllenNLP's names, its inputs and its output.
optimizers.json: the parameters of a tiny model (a sparse embedding and a linear layer) after each
``dense_sparse_adam`` step. schedulers.json: ``multi_step``'s learning rates after each epoch, stepped as
AllenNLP's trainer steps it (``step`` once at the end of each epoch).
"""

import json
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

import torch  # noqa: E402
from allennlp.common import Params  # noqa: E402
from allennlp.modules.attention import Attention  # noqa: E402
from allennlp.modules.highway import Highway  # noqa: E402
from allennlp.modules.matrix_attention import MatrixAttention  # noqa: E402
from allennlp.modules.seq2seq_encoders import Seq2SeqEncoder  # noqa: E402
from allennlp.modules.span_extractors import SpanExtractor  # noqa: E402
from allennlp.modules.time_distributed import TimeDistributed  # noqa: E402
from allennlp.training.learning_rate_schedulers import LearningRateScheduler  # noqa: E402
from allennlp.training.optimizers import Optimizer  # noqa: E402

GOLDEN = Path(__file__).resolve().parents[1] / "allennlp_golden" / "modules"


def tensor_json(value):
    if isinstance(value, torch.Tensor):
        return {"dtype": str(value.dtype).replace("torch.", ""), "values": value.tolist()}
    return value


def case(base, config, inputs, seed=0):
    torch.manual_seed(seed)
    module = base.from_params(Params(json.loads(json.dumps(config))))
    module.eval()
    with torch.no_grad():
        output = module(*inputs) if isinstance(inputs, list) else module(**inputs)
    named = inputs if isinstance(inputs, dict) else {f"arg{k}": value for k, value in enumerate(inputs)}
    return {"config": config,
            "parameters": {name: tensor_json(p.detach()) for name, p in module.state_dict().items()},
            "inputs": {name: tensor_json(value) for name, value in named.items()},
            "output": tensor_json(output)}


def matrix_attentions():
    torch.manual_seed(1)
    m1, m2, m3 = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    positive = torch.rand(2, 5, 4) + 0.5
    configs = [
        ({"type": "dot_product"}, [m1, m2]),
        ({"type": "scaled_dot_product"}, [m1, m2]),
        ({"type": "cosine"}, [m1, m2]),
        ({"type": "bilinear", "matrix_1_dim": 4, "matrix_2_dim": 6}, [m1, m3]),
        ({"type": "bilinear", "matrix_1_dim": 4, "matrix_2_dim": 6, "use_input_biases": True, "label_dim": 2,
          "activation": "tanh"}, [m1, m3]),
        ({"type": "linear", "tensor_1_dim": 4, "tensor_2_dim": 6}, [m1, m3]),
        ({"type": "linear", "tensor_1_dim": 4, "tensor_2_dim": 4, "combination": "x,y,x*y,x+y,x-y,x/y",
          "activation": "relu"}, [m1, positive]),
    ]
    return [case(MatrixAttention, config, inputs, seed) for seed, (config, inputs) in enumerate(configs)]


def attentions():
    torch.manual_seed(2)
    vector, matrix, wide = torch.randn(3, 4), torch.randn(3, 5, 4), torch.randn(3, 5, 6)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False], [True, False, False, False, False]])
    configs = [
        ({"type": "dot_product"}, [vector, matrix, mask]),
        ({"type": "dot_product", "normalize": False}, [vector, matrix, mask]),
        ({"type": "scaled_dot_product"}, [vector, matrix, mask]),
        ({"type": "scaled_dot_product", "scaling_factor": 2}, [vector, matrix, mask]),
        ({"type": "cosine"}, [vector, matrix, mask]),
        ({"type": "bilinear", "vector_dim": 4, "matrix_dim": 6}, [vector, wide, mask]),
        ({"type": "bilinear", "vector_dim": 4, "matrix_dim": 6, "activation": "tanh", "normalize": False},
         [vector, wide, mask]),
        ({"type": "additive", "vector_dim": 4, "matrix_dim": 6}, [vector, wide, mask]),
        ({"type": "linear", "tensor_1_dim": 4, "tensor_2_dim": 6}, [vector, wide, mask]),
        # not x*y or x/y: AllenNLP's linear attention broadcasts them to (batch, batch, n) (a bug distrain lacks)
        ({"type": "linear", "tensor_1_dim": 4, "tensor_2_dim": 4, "combination": "x,y,x-y,x+y"},
         [vector, matrix, mask]),
    ]
    return [case(Attention, config, inputs, seed) for seed, (config, inputs) in enumerate(configs)]


def span_extractors():
    torch.manual_seed(3)
    sequence = torch.randn(2, 7, 6)
    sequence_mask = torch.tensor([[True] * 7, [True] * 5 + [False] * 2])
    spans = torch.tensor([[[0, 0], [1, 4], [2, 6], [6, 6]], [[0, 4], [3, 3], [1, 2], [0, 0]]])
    span_mask = torch.tensor([[True, True, True, True], [True, True, True, False]])
    inputs = {"sequence_tensor": sequence, "span_indices": spans, "sequence_mask": sequence_mask,
              "span_indices_mask": span_mask}
    configs = [
        {"type": "endpoint", "input_dim": 6},
        {"type": "endpoint", "input_dim": 6, "combination": "x,y,x*y,x-y", "num_width_embeddings": 5,
         "span_width_embedding_dim": 3, "bucket_widths": True},
        {"type": "endpoint", "input_dim": 6, "use_exclusive_start_indices": True},
        {"type": "bidirectional_endpoint", "input_dim": 6},
        {"type": "bidirectional_endpoint", "input_dim": 6, "forward_combination": "x,y", "backward_combination": "x*y",
         "num_width_embeddings": 8, "span_width_embedding_dim": 2},
        {"type": "bidirectional_endpoint", "input_dim": 6, "use_sentinels": False},
        {"type": "self_attentive", "input_dim": 6},
        {"type": "self_attentive", "input_dim": 6, "num_width_embeddings": 7, "span_width_embedding_dim": 4},
    ]
    return [case(SpanExtractor, config, dict(inputs), seed) for seed, config in enumerate(configs)]


def seq2seq_encoders():
    torch.manual_seed(4)
    inputs = torch.randn(3, 6, 5)
    mask = torch.tensor([[True] * 6, [True] * 3 + [False] * 3, [True] + [False] * 5])
    configs = [
        {"type": "stacked_bidirectional_lstm", "input_size": 5, "hidden_size": 4, "num_layers": 2},
        {"type": "stacked_bidirectional_lstm", "input_size": 5, "hidden_size": 3, "num_layers": 1, "use_highway": False,
         "recurrent_dropout_probability": 0.3, "layer_dropout_probability": 0.2},
        {"type": "alternating_lstm", "input_size": 5, "hidden_size": 4, "num_layers": 3},
        {"type": "alternating_lstm", "input_size": 5, "hidden_size": 3, "num_layers": 2, "use_highway": False,
         "use_input_projection_bias": False},
    ]
    return [case(Seq2SeqEncoder, config, [inputs * (1 + seed), mask], seed) for seed, config in enumerate(configs)]


def time_distributed():
    torch.manual_seed(5)
    linear = torch.nn.Linear(4, 3)
    module = TimeDistributed(linear)
    inputs = torch.randn(2, 3, 5, 4)
    with torch.no_grad():
        output = module(inputs)
    return [{"config": {"in_features": 4, "out_features": 3},
             "parameters": {name: tensor_json(p) for name, p in module.state_dict().items()},
             "inputs": {"arg0": tensor_json(inputs)}, "output": tensor_json(output)}]


def highway():
    torch.manual_seed(7)
    inputs = torch.randn(2, 3, 4)
    cases = []
    for num_layers in (1, 2):
        module = Highway(4, num_layers)
        with torch.no_grad():
            output = module(inputs)
        cases.append({"config": {"input_dim": 4, "num_layers": num_layers},
                      "parameters": {name: tensor_json(p) for name, p in module.state_dict().items()},
                      "inputs": {"arg0": tensor_json(inputs)}, "output": tensor_json(output)})
    return cases


def dense_sparse_adam():
    """A sparse embedding and a dense linear layer, 4 steps on fixed ids and targets."""
    torch.manual_seed(6)
    embedding = torch.nn.Embedding(10, 3, sparse=True)
    linear = torch.nn.Linear(3, 2)
    model = torch.nn.ModuleDict({"embedding": embedding, "linear": linear})
    start = {name: tensor_json(p.detach().clone()) for name, p in model.named_parameters()}
    config = {"type": "dense_sparse_adam", "lr": 0.1, "betas": [0.8, 0.9], "eps": 1e-6}
    optimizer = Optimizer.from_params(model_parameters=list(model.named_parameters()),
                                      params=Params(dict(config)))
    batches = [torch.tensor([[1, 2, 2], [3, 1, 0]]), torch.tensor([[4, 5, 1]]), torch.tensor([[1, 9], [9, 2]]),
               torch.tensor([[7, 7, 7]])]
    after = []
    for ids in batches:
        optimizer.zero_grad()
        loss = (linear(embedding(ids)).sum(-1) ** 2).mean()
        loss.backward()
        optimizer.step()
        after.append({name: tensor_json(p.detach().clone()) for name, p in model.named_parameters()})
    return {"config": config, "start": start, "batches": [b.tolist() for b in batches], "after_each_step": after}


def multi_step():
    cases = []
    for config in ({"type": "multi_step", "milestones": [2, 4, 4], "gamma": 0.5},
                   {"type": "multi_step", "milestones": [1, 3]}):
        parameters = [torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))]
        optimizer = torch.optim.SGD([{"params": [parameters[0]], "lr": 1.0}, {"params": [parameters[1]], "lr": 0.3}])
        scheduler = LearningRateScheduler.from_params(optimizer=optimizer, params=Params(dict(config)))
        rates = [[group["lr"] for group in optimizer.param_groups]]
        for epoch in range(7):
            scheduler.step_batch(epoch)
            scheduler.step(None)  # the trainer, at the end of each epoch
            rates.append([group["lr"] for group in optimizer.param_groups])
        cases.append({"config": config, "base_lrs": [1.0, 0.3], "rates_after_each_epoch": rates})
    return cases


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    files = {"matrix_attentions.json": matrix_attentions(), "attentions.json": attentions(),
             "span_extractors.json": span_extractors(), "seq2seq_encoders.json": seq2seq_encoders(),
             "time_distributed.json": time_distributed(),
             "highway.json": highway(), "dense_sparse_adam.json": dense_sparse_adam(),
             "multi_step.json": multi_step()}
    for name, content in files.items():
        (GOLDEN / name).write_text(json.dumps({"made_by": "/work/oracle/bin/python tests/allennlp_oracle/module_outputs.py "
                                                          "(AllenNLP 2.10.1, torch 1.12.1)",
                                               "cases": content}) + "\n")
        print(name, (GOLDEN / name).stat().st_size)


if __name__ == "__main__":
    main()
