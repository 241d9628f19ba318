"""``constituency_parser``: ``{"sentence": ...}`` to its constituency parse, as AllenNLP's predictor of that name
answers: the span scores, the tree in bracketed form, and the tree as Hierplane's JSON (AllenNLP's demo)."""

from __future__ import annotations

from typing import Any

from distrain.data.fields import Instance
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict
from distrain.predictors.sentence_tagger import SpacySentencePredictor
from distrain.zoo.structured_prediction.trees import Tree, parse_tree

#: the English part-of-speech tags spaCy 2 knew (the Penn Treebank's and its own), each a word-level node: Hierplane
#: labels their links "pos" and draws them plain
WORD_TAGS = ('"" # $ \'\' , -LRB- -RRB- . : ADD AFX BES CC CD DT EX FW GW HVS HYPH IN JJ JJR JJS LS MD NFP NIL NN NNP '
             'NNPS NNS PDT POS PRP PRP$ RB RBR RBS RP SP SYM TO UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB XX _SP ``').split()
LINK_TO_LABEL = dict.fromkeys(WORD_TAGS, "pos")
#: phrase colours: noun phrases, verb phrases, clauses, wh-phrases, prepositional phrases, the other phrases
_PHRASE_STYLES = {
    ("color1",): "NP NX QP NAC", ("color2",): "VP", ("color3",): "S SQ SBAR SBARQ SINQ FRAG X",
    ("color4",): "WHADVP WHADJP WHNP WHPP", ("color6",): "PP", ("color5",): "ADJP ADVP CONJP INTJ PRN PRT RRC UCP",
    ("color5", "seq"): "LST",
}
NODE_TYPE_TO_STYLE = {**{tag: ["color0"] for tag in WORD_TAGS},
                      **{label: list(style) for style, labels in _PHRASE_STYLES.items() for label in labels.split()}}


@Predictor.register("constituency_parser")
class ConstituencyParserPredictor(SpacySentencePredictor):
    """For ``constituency_parser``: spaCy's fine-grained tags (none without the spaCy model package) are the parser's
    part-of-speech input."""

    #: what AllenNLP's parser answers (distrain's model also gives the span logits and mask)
    answered = ("class_probabilities", "spans", "tokens", "pos_tags", "trees")

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        tokens = self._tokenizer.tokenize(self.required(json_dict, "sentence"))
        return self._dataset_reader.text_to_instance([token.text for token in tokens],
                                                     [token.tag_ or "" for token in tokens])

    def _run(self, instances: list[Instance]) -> list[JsonDict]:
        outputs = [{key: output[key] for key in self.answered} for output in super()._run(instances)]
        for output in outputs:
            output["num_spans"] = len(output["spans"])
            output["hierplane_tree"] = {"linkNameToLabel": LINK_TO_LABEL, "nodeTypeToStyle": NODE_TYPE_TO_STYLE,
                                        **_hierplane_root(parse_tree(output["trees"]))}
        return outputs


def _hierplane_root(tree: Tree) -> dict[str, Any]:
    return {"text": " ".join(tree.leaves()), "root": hierplane_node(tree)}


def hierplane_node(tree: Tree) -> dict[str, Any]:
    """A subtree as Hierplane's node: its words, its label as type, attribute and link, its subtrees as children."""
    node: dict[str, Any] = {"word": " ".join(tree.leaves()), "nodeType": tree.label, "attributes": [tree.label],
                            "link": tree.label}
    children = [hierplane_node(child) for child in tree.children if isinstance(child, Tree)]
    if children:
        node["children"] = children
    return node
