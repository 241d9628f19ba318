"""Models that predict structures over a sentence (dependency trees and graphs, constituency trees), their readers,
decoders and scorers (EVALB, attachment scores): AllenNLP's ``structured_prediction``."""
