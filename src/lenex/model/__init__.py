from .attention import Span, attend, plan_attention
from .transformer import LanguageModel

__all__ = ["LanguageModel", "Span", "attend", "plan_attention"]
