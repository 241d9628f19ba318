"""``distrain check CONFIG``: validate, read the data, build model and trainer, but do not train."""

from __future__ import annotations

import argparse
import tempfile


def run(args: argparse.Namespace) -> int:
    from distrain.commands.train import load_and_resolve
    from distrain.distributed.world import World
    from distrain.experiment import make_loader, prepare_data, set_seed

    config, resolved = load_and_resolve(args)
    experiment = resolved.build()
    distributed = resolved.distributed
    workers = distributed.world_size if distributed else 1
    set_seed(resolved.random_seed)
    prepared = prepare_data(experiment)
    model = experiment.model.construct(vocab=prepared.vocab)
    world = World(rank=0, size=workers, weights=tuple(distributed.device_weights) if distributed and distributed.device_weights else None)
    loader = make_loader(prepared.train, experiment.dataset_reader, prepared.vocab, experiment.data_loader,
                         world, resolved.random_seed)
    with tempfile.TemporaryDirectory() as scratch:
        trainer = experiment.trainer.construct(
            model=model, train_loader=loader, validation_loader=None, serialization_dir=scratch,
            world=World(rank=0, size=1),
        )
    accumulation = getattr(trainer, "accumulation", 1)
    parameters = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"config OK: {args.config}")
    print(f"  dataset_reader   {type(experiment.dataset_reader).__name__}")
    print(f"  training data    {len(prepared.train)} instances from {experiment.train_data_path}")
    if prepared.validation is not None:
        print(f"  validation data  {len(prepared.validation)} instances from {experiment.validation_data_path}")
    print(f"  vocabulary       {prepared.vocab}")
    print(f"  model            {type(model).__name__}: {parameters:,} parameters ({trainable:,} trainable)")
    print(f"  trainer          {type(trainer).__name__}, optimizer {type(trainer.optimizer).__name__}")
    print(f"  workers          {workers}" + (f" (devices {distributed.cuda_devices})" if distributed else ""))
    print(
        f"  effective batch  {experiment.data_loader.batch_size * workers * accumulation} = "
        f"{experiment.data_loader.batch_size} per worker x {workers} worker(s) x {accumulation} accumulation"
    )
    print(f"  steps per epoch  {len(loader) // accumulation + (len(loader) % accumulation > 0)}")
    return 0
