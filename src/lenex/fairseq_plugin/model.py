"""The `lenex_lm` fairseq model: a FairseqLanguageModel whose decoder is lenex's own
`LanguageModel` (token embedding, position scheme, mask, blocks, final norm, tied head), so the
attention numerics are lenex's and a fairseq checkpoint is a lenex state dict behind the prefix
`decoder.lm.` (`lenex.fairseq_backend.convert`).

Token ids: fairseq's dictionary puts 4 special symbols (bos, pad, eos, unk) before lenex's token
ids, written as the symbols "0" .. "V-1" (`lenex.fairseq_backend.binarize`): fairseq id = lenex
id + 4. The decoder subtracts the offset on the way in (a special symbol, which fairseq feeds as
the first input of a stream, becomes lenex's end-of-text token) and puts the specials back on
the way out as -inf logits, so the output distribution over real tokens is exactly lenex's.
"""

# no `from __future__ import annotations`: fairseq reads the dataclass field types at runtime

from dataclasses import dataclass, field

import torch
from fairseq.dataclass import FairseqDataclass
from fairseq.models import FairseqDecoder, FairseqLanguageModel, register_model
from omegaconf import II

from lenex.fairseq_backend.convert import model_config as lenex_model_config
from lenex.model import LanguageModel


@dataclass
class LenexLMConfig(FairseqDataclass):
    decoder_layers: int = field(default=2, metadata={"help": "transformer blocks (lenex n_layer)"})
    decoder_embed_dim: int = field(default=64, metadata={"help": "model width (lenex d_model)"})
    decoder_ffn_embed_dim: int = field(default=256, metadata={"help": "feed-forward width (lenex d_ff)"})
    decoder_attention_heads: int = field(default=4, metadata={"help": "attention heads (lenex n_head)"})
    dropout: float = field(default=0.0, metadata={"help": "residual, embedding and attention dropout"})
    lenex_position: str = field(default="rope", metadata={"help": "a lenex.positions registry name"})
    lenex_position_options: str = field(default="{}", metadata={"help": "JSON object of position options"})
    lenex_mask: str = field(default="causal", metadata={"help": "a lenex.masks registry name (training mask)"})
    lenex_mask_options: str = field(default="{}", metadata={"help": "JSON object of mask options"})
    lenex_eot: int = field(default=50256, metadata={"help": "lenex's end-of-text id, fed where fairseq feeds a special"})
    tokens_per_sample: int = II("task.tokens_per_sample")


class LenexDecoder(FairseqDecoder):
    def __init__(self, cfg, dictionary):
        super().__init__(dictionary)
        self.n_special = dictionary.nspecial
        self.eot = cfg.lenex_eot
        self.lm = LanguageModel(lenex_model_config(cfg, len(dictionary) - self.n_special))

    def lenex_ids(self, tokens: torch.Tensor) -> torch.Tensor:
        return torch.where(tokens < self.n_special, torch.full_like(tokens, self.eot), tokens - self.n_special)

    def extract_features(self, prev_output_tokens, encoder_out=None, **kwargs):
        return self.lm.hidden(self.lenex_ids(prev_output_tokens)), {}

    def output_layer(self, features, **kwargs):
        logits = self.lm.logits(features)
        specials = logits.new_full((*logits.shape[:-1], self.n_special), float("-inf"))
        return torch.cat([specials, logits], dim=-1)

    def forward(self, prev_output_tokens, encoder_out=None, **kwargs):
        features, extra = self.extract_features(prev_output_tokens)
        return self.output_layer(features), extra

    def max_positions(self):
        # Position schemes that extrapolate take any length; learned absolute positions refuse
        # beyond their table themselves (lenex raises a clear error).
        return int(1e6)


@register_model("lenex_lm", dataclass=LenexLMConfig)
class LenexLanguageModel(FairseqLanguageModel):
    @classmethod
    def build_model(cls, cfg, task):
        return cls(LenexDecoder(cfg, task.target_dictionary))
