"""AllenNLP's ``language_model`` (allennlp-models v2.10.1): its archive trained by AllenNLP on the unsampled
fixture gives AllenNLP's outputs in distrain (the ``evaluate`` metrics are compared in test_allennlp_archives.py,
as for every golden case), ``training_config/lm/bidirectional_language_model.jsonnet`` checks and trains an epoch
on the fixture shards, the sampled model trains alike on one and two workers, and the parts that make that so
(the shared sample draw, the noam schedule) hold on their own."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, golden_job
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
LM = MODELS / "test_fixtures" / "lm"


def test_allennlp_language_model_archive_gives_allennlps_losses_and_embeddings(monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job("language_model")
    worst = 0.0
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            for key, value in theirs.items():  # the three losses, lm_embeddings, noncontextual_token_embeddings
                produced = mine[key][0] if mine[key].dim() else mine[key]
                worst = max(worst, float(np.abs(produced.numpy() - np.asarray(value)).max()))
    print("language_model max |difference| from AllenNLP's outputs:", worst)
    assert worst <= 1e-5


def _bidirectional_lm_arguments() -> list[str]:
    folder = LM / "bidirectional_language_model"
    return ["--ext-var", f"BIDIRECTIONAL_LM_TRAIN_PATH={folder / 'training_data'}/*",
            "--ext-var", f"BIDIRECTIONAL_LM_VOCAB_PATH={folder / 'vocab'}"]


def test_bidirectional_language_model_config_passes_check_and_trains_an_epoch_on_two_cpu_workers(tmp_path):
    """The config as written, its ext vars given as ``distrain`` takes them (a glob of the two fixture shards and
    the fixture vocabulary), its two GPUs as two CPU workers (each reads one shard: ``sharded``). The full sizes
    (a 60M-parameter model, 8192 sampled words of 8215) train the four sentences in seconds. ``use_amp`` on CPU
    autocasts to bfloat16 (distrain warns where the CPU lacks bfloat16 kernels); ``dense_sparse_adam``,
    ``noam`` and four accumulation steps run as configured."""
    config = CONFIGS / "bidirectional_language_model.jsonnet"
    cpu = ["-o", '{"distributed.cuda_devices": [-1, -1], "trainer.num_epochs": 1}']
    checked = run_cli("check", str(config), *_bidirectional_lm_arguments(), *cpu, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "effective batch  512 = 64 per worker x 2 worker(s) x 4 accumulation" in checked.stdout
    trained = run_cli("train", str(config), *_bidirectional_lm_arguments(), *cpu, "-s", "runs/blm", "-f", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    metrics = json.loads((tmp_path / "runs" / "blm" / "metrics.json").read_text())
    assert metrics["epoch"] == 0 and np.isfinite(metrics["training_loss"]) and metrics["training_perplexity"] > 1


def test_bidirectional_language_model_config_naming_missing_parts_is_one_line_each_before_data_is_read(tmp_path):
    config = CONFIGS / "bidirectional_language_model.jsonnet"
    overrides = json.dumps({"distributed.cuda_devices": [-1, -1], "model.contextualizer.type": "no_such_contextualizer",
                            "model.no_such_argument": 1, "train_data_path": str(tmp_path / "absent" / "*")})
    result = run_cli("check", str(config), *_bidirectional_lm_arguments(), "-o", overrides, cwd=tmp_path)
    assert result.returncode == 2
    problems = [line.strip() for line in result.stderr.splitlines()[1:] if line.strip()]
    print(result.stderr)
    assert len(problems) == 2, problems
    assert any(line.startswith("model.contextualizer.type:") and "no_such_contextualizer" in line for line in problems)
    assert any(line.startswith("model.no_such_argument:") for line in problems)


def test_sampled_language_model_ends_alike_on_one_and_two_workers(tmp_path):
    """allennlp-models' sampled fixture (10 of the vocabulary's words drawn per call) on its two sentences: a batch
    of 2 on one worker is the global batch of 1 on each of two. Every worker draws the same words for a step (the
    draw is a function of the model's seed and the call count), so the summed loss is the one-worker loss: weights
    and metrics within 1e-5 after 3 epochs. Its sparse softmax is made dense: DDP takes no sparse gradients."""
    from distrain.config.loading import load_config
    from support.distributed import final_metrics, max_weight_difference

    runs = {}
    for workers in (1, 2):
        config = load_config(LM / "language_model" / "experiment.jsonnet")
        for split in ("train", "validation"):
            config[f"{split}_data_path"] = str(LM / "language_model" / "sentences.txt")
        config["model"]["sparse_embeddings"] = False
        config["data_loader"]["batch_size"] = 2 // workers
        config["trainer"] |= {"num_epochs": 3, "optimizer": {"type": "sgd", "lr": 0.5}}
        if workers > 1:
            config["distributed"] = {"cuda_devices": [-1] * workers}
        runs[workers] = tmp_path / f"lm_{workers}"
        trained = run_cli("train", str(write_config(tmp_path / f"lm_{workers}.json", config)), "-s", str(runs[workers]),
                          "-f", cwd=tmp_path)
        assert trained.returncode == 0, trained.stderr
    difference = max_weight_difference(runs[1], runs[2])
    print("language_model max weight difference, 1 vs 2 workers:", difference)
    assert difference <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for key in ("training_loss", "training_perplexity", "validation_loss", "validation_perplexity"):
        assert two[key] == pytest.approx(one[key], abs=1e-5), key


def test_sampled_language_model_killed_mid_run_recovers_to_the_uninterrupted_weights(tmp_path):
    """The sampled fixture with its sparse softmax and SGD (a step per sentence, a checkpoint each step), killed
    with SIGKILL after step 3 of 6 and resumed with ``--recover``: the resumed run draws the words the uninterrupted
    run drew (the call count travels in the checkpoint), so it ends with the same weights and metrics."""
    from distrain.config.loading import load_config
    from training.test_recovery import metrics_without_duration, start_training, weights

    config = load_config(LM / "language_model" / "experiment.jsonnet")
    for split in ("train", "validation"):
        config[f"{split}_data_path"] = str(LM / "language_model" / "sentences.txt")
    config["data_loader"]["batch_size"] = 1
    config["trainer"] |= {"num_epochs": 3, "optimizer": {"type": "sgd", "lr": 0.5}, "save_every_num_batches": 1,
                          "callbacks": [{"type": "test_kill_switch"}]}
    path = write_config(tmp_path / "lm.json", config)
    # all three runs start alike (fresh interpreters): the LSTM's kernels round by the threads they are given
    whole = start_training(path, tmp_path / "whole")
    _, errors = whole.communicate(timeout=300)
    assert whole.returncode == 0, errors
    killed = start_training(path, tmp_path / "killed", env={"DISTRAIN_TEST_KILL_AT_STEP": "3"})
    killed.communicate(timeout=300)
    final = "checkpoints/epoch_0003_batch_00000000/model.safetensors"  # after the third epoch
    assert killed.returncode == -9 and not (tmp_path / "killed" / final).exists()
    recovered = start_training(path, tmp_path / "killed", "--recover")
    _, errors = recovered.communicate(timeout=300)
    assert recovered.returncode == 0, errors
    expected, actual = weights(tmp_path / "whole" / final), weights(tmp_path / "killed" / final)
    assert expected.keys() == actual.keys()
    for name in expected:
        assert torch.equal(expected[name], actual[name]), name
    assert metrics_without_duration(tmp_path / "killed") == metrics_without_duration(tmp_path / "whole")


def test_sampled_softmax_draws_the_same_words_for_any_split_of_a_call():
    """Two halves of the targets, each in its own module at the same call count (two workers), sum to the loss of
    all of them in one (one worker); the next call draws other words; evaluation is the full softmax."""
    from distrain.zoo.lm.modules.sampled_softmax_loss import SampledSoftmaxLoss, log_uniform_choice

    torch.manual_seed(0)
    whole = SampledSoftmaxLoss(50, 4, num_samples=20)
    torch.manual_seed(0)
    halves = SampledSoftmaxLoss(50, 4, num_samples=20)
    embeddings, targets = torch.randn(6, 4), torch.tensor([0, 3, 7, 7, 12, 40])
    torch.set_grad_enabled(False)  # restored below: only values are compared
    together = whole(embeddings, targets)
    apart = halves(embeddings[:3], targets[:3])
    halves.calls -= 1  # the other worker's module, at the same call
    apart = apart + halves(embeddings[3:], targets[3:])
    assert float(together) == pytest.approx(float(apart), abs=1e-6)
    assert float(whole(embeddings, targets)) != pytest.approx(float(together), abs=1e-6)
    drawn, tries = log_uniform_choice(np.random.default_rng(1), 50, 20)
    assert len(set(drawn.tolist())) == 20 and tries >= 20 and drawn.max() < 50
    whole.eval()
    full = torch.nn.functional.cross_entropy(embeddings @ whole.softmax_w.t() + whole.softmax_b, targets, reduction="sum")
    assert float(whole(embeddings, targets)) == pytest.approx(float(full), abs=1e-5)
    torch.set_grad_enabled(True)


def test_noam_schedule_rises_for_warmup_steps_then_falls_as_one_over_the_square_root():
    from distrain.optim.allennlp_schedulers import Noam

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    schedule = Noam(optimizer, num_training_steps=100, model_size=512, warmup_steps=4, factor=2.0)
    for step in range(10):
        n = step + 1
        expected = 2.0 * 512 ** -0.5 * min(n ** -0.5, n * 4 ** -1.5)
        assert schedule.rates(step) == [pytest.approx(expected)]
