"""The parts AllenNLP's own encoder-decoders are built from: the decoder nets and sequence decoders of
``composed_seq2seq``, and what every decoder of the family shares (the shifted sequence loss, the encoder's
final state, the vocabulary lookups of decoded ids)."""
