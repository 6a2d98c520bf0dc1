from .attention import Span, additive_mask, attend, plan_attention
from .transformer import LanguageModel

__all__ = ["LanguageModel", "Span", "additive_mask", "attend", "plan_attention"]
