"""Sequence-to-sequence models of AllenNLP's ``generation`` zoo: pretrained encoder-decoders (BART, T5) decoded by
beam search, the CNN/DailyMail reader, BLEU and ROUGE. (The serving decode loop is :mod:`distrain.generation`,
apart.)"""
