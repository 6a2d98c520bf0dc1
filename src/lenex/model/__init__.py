from .attention import Span, additive_mask, attend, plan_attention
from .inspection import KeyValueCache, LayerView
from .transformer import LanguageModel

__all__ = ["KeyValueCache", "LanguageModel", "LayerView", "Span", "additive_mask", "attend", "plan_attention"]
