"""AllenNLP's bidirectional language model, its losses and contextual encoder, the reader of plain sentences, and the
token embedders that run a trained language model archive."""
