"""``allennlp.data.samplers``: batch samplers under AllenNLP's names, called on a list of instances."""

from distrain.allennlp.data.samplers.batch_sampler import BatchSampler
from distrain.allennlp.data.samplers.bucket_batch_sampler import BucketBatchSampler
from distrain.allennlp.data.samplers.max_tokens_batch_sampler import MaxTokensBatchSampler

__all__ = ["BatchSampler", "BucketBatchSampler", "MaxTokensBatchSampler"]
