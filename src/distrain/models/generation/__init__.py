"""Text generation models of AllenNLP's zoo: pretrained encoder-decoders (BART, T5) decoded by beam search."""
