"""``biaffine_dependency_parser``: ``{"sentence": ...}`` to its dependency parse, as AllenNLP's predictor of that name
answers: the words, their part-of-speech tags, the predicted heads and labels, and the parse as a Hierplane tree
(the JSON AllenNLP's demo drew)."""

from __future__ import annotations

from typing import Any

from distrain.data.fields import Instance
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict
from distrain.predictors.sentence_tagger import SpacySentencePredictor

#: Hierplane's colour of a node by its dependency label: the root, then subjects, complements, function words and
#: other modifiers (AllenNLP's demo palette; a label not named here is drawn plain)
_STYLE_GROUPS = {
    ("color5", "strong"): "root dep",
    ("color1",): "nsubj nsubjpass csubj csubjpass",
    ("color2",): "pobj dobj iobj mark pcomp xcomp ccomp acomp",
    ("color3",): "aux cop det conj cc prep number possesive poss discourse expletive prt advcl",
    ("color4",): "mod amod tmod quantmod npadvmod infmod advmod appos nn",
    ("color0",): "neg punct",
}
NODE_TYPE_TO_STYLE = {label: list(style) for style, labels in _STYLE_GROUPS.items() for label in labels.split()}
#: subjects drawn to the left of their head, arguments and clausal complements to the right
LINK_TO_POSITION = {**dict.fromkeys("nsubj nsubjpass csubj csubjpass".split(), "left"),
                    **dict.fromkeys("pobj dobj iobj pcomp xcomp ccomp acomp".split(), "right")}


@Predictor.register("biaffine_dependency_parser")
class BiaffineDependencyParserPredictor(SpacySentencePredictor):
    """For ``biaffine_parser``: the sentence is split by spaCy (``language``), whose tags (universal, or the
    language's own where the reader reads ``use_language_specific_pos``) are the parser's part-of-speech input;
    without the spaCy model package every tag is empty, as AllenNLP's predictor then gives too."""

    #: what AllenNLP's parser answers (distrain's model also gives its raw heads, scores and mask, which its own
    #: ``predict`` writes); the losses only for one sentence alone, as AllenNLP's
    answered = ("words", "pos", "predicted_heads", "predicted_dependencies", "arc_loss", "tag_loss", "loss")

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        tokens = self._tokenizer.tokenize(self.required(json_dict, "sentence"))
        fine = getattr(self._dataset_reader, "use_language_specific_pos", False)
        tags = [(token.tag_ if fine else token.pos_) or "" for token in tokens]
        return self._dataset_reader.text_to_instance([token.text for token in tokens], tags)

    def _run(self, instances: list[Instance]) -> list[JsonDict]:
        outputs = [{key: output[key] for key in self.answered if key in output} for output in super()._run(instances)]
        for output in outputs:
            output["hierplane_tree"] = hierplane_tree(output["words"], output["predicted_heads"],
                                                      output["predicted_dependencies"], output["pos"])
        return outputs


def hierplane_tree(words: list[str], heads: list[int], labels: list[str], tags: list[str]) -> dict[str, Any]:
    """The parse as Hierplane's JSON: each word a node under its head (heads 1-based, 0 the root), with its label
    as node type and link, its tag as attribute, and its character span in the words joined by spaces (each span
    one past the word, taking the space after it)."""
    starts = [sum(len(word) + 1 for word in words[:position]) for position in range(len(words))]

    def node(position: int) -> dict[str, Any]:
        built: dict[str, Any] = {"word": words[position], "nodeType": labels[position], "attributes": [tags[position]],
                                 "link": labels[position],
                                 "spans": [{"start": starts[position], "end": starts[position] + len(words[position]) + 1}]}
        children = [node(child) for child, head in enumerate(heads) if head == position + 1]
        if children:
            built["children"] = children
        return built

    return {"text": " ".join(words), "root": node(heads.index(0)), "nodeTypeToStyle": NODE_TYPE_TO_STYLE,
            "linkToPosition": LINK_TO_POSITION}
