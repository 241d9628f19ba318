"""Adapter implementations (the base is :mod:`distrain.modules.adapter`)."""
