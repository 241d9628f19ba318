"""Models that predict structures over a sentence (dependency trees and graphs): AllenNLP's
``structured_prediction`` models."""
