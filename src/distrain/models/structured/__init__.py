"""Models that predict structures over a sentence (dependency trees and graphs, constituency trees): AllenNLP's
``structured_prediction`` models."""
