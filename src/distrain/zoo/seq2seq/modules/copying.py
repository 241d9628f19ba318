"""CopyNet's arithmetic over the extended vocabulary: the target vocabulary's ids, then one id per source
position (``target_vocab_size + position``), as allennlp-models' ``copynet_seq2seq`` laid it out.

A word may be reachable both ways (generated, and copied from one or more positions); a beam must see it once,
with the probabilities of all its ways summed (log-sum-exp), or two beams would hold the same text.
"""

from __future__ import annotations

import torch

TINY = 1e-13  # AllenNLP's tiny_value_of_dtype for float32


def log_of(mask: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """0 where ``mask`` holds, log(1e-13) elsewhere: AllenNLP's way of masking log-probabilities."""
    return (mask.to(like.dtype) + TINY).log()


def masked_log_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(scores + log_of(mask, scores), dim=-1)


def extended_gold_tokens(targets: torch.Tensor, source_token_ids: torch.Tensor, target_token_ids: torch.Tensor,
                         oov_index: int, target_vocab_size: int) -> torch.Tensor:
    """The targets in the extended vocabulary: an OOV target word found in the source becomes the id of its
    first source position (what a perfect decoder would emit), for BLEU against the decoded ids."""
    batch, steps = targets.shape
    positions = source_token_ids.shape[1]
    matches = source_token_ids.unsqueeze(1).expand(batch, steps, positions) == \
        target_token_ids.unsqueeze(-1).expand(batch, steps, positions)
    replaced = (targets == oov_index) & (matches.sum(-1) > 0)
    first_match = ((matches.cumsum(-1) == 1) & matches).to(torch.uint8).argmax(-1)
    return targets * ~replaced + (first_match.long() + target_vocab_size) * replaced


def merged_log_probabilities(generation: torch.Tensor, copy: torch.Tensor, source_to_target: torch.Tensor,
                             source_token_ids: torch.Tensor, oov_index: int) -> torch.Tensor:
    """``(group, vocab + positions)`` log-probabilities over the extended vocabulary with each word counted once:
    a source word the target vocabulary knows has its copy probability added to its generation id (its
    positions then score nothing); an unknown one collects all its positions' probability at its first position
    (later repeats score nothing)."""
    positions = source_to_target.shape[1]
    left_over = []
    for i in range(positions):
        copy_i = copy[:, i]
        target_id = source_to_target[:, i]
        known = target_id != oov_index
        generated = generation.gather(1, target_id.unsqueeze(-1))
        combined = torch.logsumexp(torch.cat((generated, (copy_i + log_of(known, copy_i)).unsqueeze(-1)), 1), 1)
        generation = generation.scatter(-1, target_id.unsqueeze(-1), combined.unsqueeze(-1))
        if i < positions - 1:  # this position gathers its word's later occurrences
            later = source_token_ids[:, i + 1:] == source_token_ids[:, i].unsqueeze(-1)
            copy_i = torch.logsumexp(torch.cat((copy_i.unsqueeze(-1), copy[:, i + 1:] + log_of(later, copy)), -1), -1)
        if i > 0:  # ... unless an earlier position holds the word: then that one did
            earlier = source_token_ids[:, :i] == source_token_ids[:, i].unsqueeze(-1)
            copy_i = copy_i + log_of(earlier.sum(-1) == 0, copy_i)
        left_over.append((copy_i + log_of(~known, copy_i)).unsqueeze(-1))
    return torch.cat([generation, *left_over], dim=-1)
