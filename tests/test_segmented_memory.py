"""The released models' memory on one GPU (issue 48): the formulas of lenex.segmented.memory against
hand computations and meta-device builds, the gpu preset's micro-batch fitting an 80 GB card, and
the two savings of HFLanguageModel (chunked loss, activation checkpointing) giving the same loss
and gradients as the plain path; Figure 3's read-out holding one layer's attention at a time."""

import math

import pytest
import torch

from lenex.files import read_yaml
from lenex.hf.models import chunked_loss, tiny_random
from lenex.segmented.memory import (GIB, RELEASED, Architecture, MemorySettings, counted_as_untied, parameters,
                                    peak_gib, training_bytes)
from test_workflow import REPO

transformers = pytest.importorskip("transformers")


def test_parameters_by_hand():
    # GPT-2 small: 12 x (4 x 768^2 + 2 x 768 x 3072) + 50257 x 768
    assert parameters(RELEASED["openai-community/gpt2"]) == 12 * (4 * 589_824 + 2 * 2_359_296) + 38_597_376
    assert parameters(Architecture(1, 2, 1, 4, 10, tied=False)) == 1 * (4 * 4 + 2 * 8) + 2 * 20


def test_the_papers_counts_add_the_tied_embedding_again():
    """The paper's "Bloom 1.45B" is bigscience/bloom-1b1 (1.07B), its tied 250,880 x 1,536
    embedding counted again as the output layer; GPT-2 XL's "1.64B" the same way."""
    assert round(parameters(RELEASED["bigscience/bloom-1b1"]) / 1e9, 2) == 1.06
    assert round(counted_as_untied(RELEASED["bigscience/bloom-1b1"]) / 1e9, 2) == 1.45
    assert round(counted_as_untied(RELEASED["openai-community/gpt2-xl"]) / 1e9, 2) == 1.64
    pythia = RELEASED["EleutherAI/pythia-1.4b"]
    assert counted_as_untied(pythia) == parameters(pythia)  # untied already


def _hf_config(arch: Architecture, family: str):
    if family == "gpt2":
        return transformers.GPT2Config(n_layer=arch.n_layer, n_embd=arch.d_model, n_head=arch.n_head,
                                       n_inner=arch.d_ff, vocab_size=arch.vocab)
    if family == "gpt_neox":
        return transformers.GPTNeoXConfig(num_hidden_layers=arch.n_layer, hidden_size=arch.d_model,
                                          num_attention_heads=arch.n_head, intermediate_size=arch.d_ff,
                                          vocab_size=arch.vocab, tie_word_embeddings=False)
    return transformers.BloomConfig(n_layer=arch.n_layer, hidden_size=arch.d_model, n_head=arch.n_head,
                                    vocab_size=arch.vocab)


@pytest.mark.slow  # ~10 s: transformers builds three billion-parameter models (on the meta device)
@pytest.mark.parametrize("name,family", [("openai-community/gpt2-xl", "gpt2"), ("EleutherAI/pythia-1.4b", "gpt_neox"),
                                         ("bigscience/bloom-1b1", "bloom")])
def test_the_formula_counts_a_meta_device_build(name, family):
    arch = RELEASED[name]
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(_hf_config(arch, family))
    built = sum(p.numel() for p in model.parameters())  # tied weights are one parameter
    assert abs(built - parameters(arch)) / built < 0.01  # biases, norms and position tables left out


def test_training_bytes_by_hand():
    arch = Architecture(n_layer=2, d_model=4, n_head=1, d_ff=8, vocab=10, tied=True)
    plain = training_bytes(arch, MemorySettings(micro_batch=1, length=3))
    assert plain == {"weights_grads_adamw": 16 * parameters(arch),
                     "activations": 2 * (3 * 16 * 4 * 2 + 2 * 1 * 1 * 9 * 2),
                     "logits": 3 * 10 * 14}
    saved = training_bytes(arch, MemorySettings(1, 3, activation_checkpointing=True, loss_chunk_tokens=1))
    assert saved["activations"] == 2 * 3 * 4 * 2 + 3 * 16 * 4 * 2 + 2 * 9 * 2 and saved["logits"] == 10 * 14


def test_the_gpu_presets_micro_batch_fits_an_80_gb_card():
    seg = read_yaml(REPO / "config/presets/gpu.yaml")["papers"]["segmented"]["experiment"]
    continued = seg["continued"]
    for model, name in seg["hf_checkpoints"].items():
        length = seg["train_lengths"].get(model, 1024)
        arch = RELEASED[name]
        saved = MemorySettings(continued["micro_batch_size"], length, continued["activation_checkpointing"],
                               continued["loss_chunk_tokens"])
        plain = MemorySettings(continued["micro_batch_size"], length)
        assert peak_gib(arch, saved) < 80 * 1e9 / GIB, name
        assert peak_gib(arch, saved) < 0.5 * peak_gib(arch, plain) or peak_gib(arch, plain) < 10, name
    bloom = MemorySettings(continued["micro_batch_size"], 2048)
    assert peak_gib(RELEASED["bigscience/bloom-1b1"], bloom) > 70  # without the savings: no room on 80 GB


def test_chunked_loss_is_the_plain_mean_with_its_gradients():
    torch.manual_seed(0)
    hidden = torch.randn(7, 5, requires_grad=True)
    head = torch.nn.Linear(5, 11, bias=False)
    targets = torch.randint(0, 11, (7,))
    weights = torch.tensor([1.0, 0, 1, 1, 0, 1, 1])
    for w in (None, weights):
        plain = torch.nn.functional.cross_entropy(head(hidden), targets, reduction="none")
        plain = plain.mean() if w is None else (plain * w).sum() / w.sum()
        expected = torch.autograd.grad(plain, [hidden, head.weight])
        loss = chunked_loss(hidden, head, targets, w, chunk=3)
        got = torch.autograd.grad(loss, [hidden, head.weight])
        torch.testing.assert_close(loss, plain)
        for a, b in zip(got, expected):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("arch", ["gpt2", "gpt_neox", "bloom"])
def test_saving_memory_keeps_the_loss_and_gradients(arch):
    idx = torch.randint(0, 128, (2, 12), generator=torch.Generator().manual_seed(1))
    model = tiny_random(arch).train()
    for module in model.modules():  # GPT-2's configs drop out 10 %: the two passes must see the same
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    loss = model(idx, idx)[1]
    expected = torch.autograd.grad(loss, list(model.parameters()))
    model.save_memory(activation_checkpointing=True, loss_chunk_tokens=5)
    logits, saved = model(idx, idx)
    got = torch.autograd.grad(saved, list(model.parameters()))
    assert logits is None and any(getattr(m, "gradient_checkpointing", False) for m in model.hf.modules())
    torch.testing.assert_close(saved, loss)
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="loss_chunk_tokens must be a positive"):
        model.save_memory(loss_chunk_tokens=0)


@pytest.mark.parametrize("arch", ["gpt2", "bloom"])
def test_figure3_sees_each_layer_before_the_next_runs(arch):
    from lenex.hf.models import attention_modules

    model = tiny_random(arch)
    events = []
    attention_modules(model.hf)[1].register_forward_pre_hook(lambda module, args: events.append("layer 1 starts"))
    with torch.no_grad():
        model.inspect(torch.randint(0, 128, (1, 8)), lambda view: events.append(f"saw {view.layer}"))
    assert events == ["saw 0", "layer 1 starts", "saw 1"]


def test_continued_training_applies_the_presets_memory_options(tmp_path, monkeypatch):
    """The preset's `continued:` keys reach the released model (and only a released model takes them)."""
    from corpus_fixture import make_corpus

    from lenex.records.checkpoint import save_checkpoint
    from lenex.config import ModelConfig
    from lenex.hf.models import HFLanguageModel
    from lenex.model import LanguageModel
    from lenex.segmented import continued

    torch.set_num_threads(1)
    corpus = make_corpus(tmp_path / "corpus")
    save_checkpoint(tmp_path / "hf.pt", tiny_random("gpt2", vocab_size=50257, n_positions=16))
    seen = []
    real = HFLanguageModel.save_memory
    monkeypatch.setattr(HFLanguageModel, "save_memory", lambda self, **kw: (seen.append(kw), real(self, **kw))[1])
    settings = {"batch_size": 4, "lr": 1e-3, "warmup_fraction": 0.1, "log_every": 1, "checkpoint_every": 100,
                "eval_batches": 1, "activation_checkpointing": True, "loss_chunk_tokens": 8}
    summary = continued.run(tmp_path / "hf.pt", "full", 1, settings, corpus, tmp_path / "m.pt", tmp_path / "w",
                            epoch_tokens=128)
    assert seen == [{"activation_checkpointing": True, "loss_chunk_tokens": 8}]
    assert summary["step"] > 0 and math.isfinite(summary["final_loss"])
    save_checkpoint(tmp_path / "own.pt", LanguageModel(ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64,
                                                                   train_length=16)))
    with pytest.raises(ValueError, match="apply to the released .Hugging Face. models only, not to LanguageModel"):
        continued.run(tmp_path / "own.pt", "full", 1, settings, corpus, tmp_path / "o.pt", tmp_path / "wo",
                      epoch_tokens=128)
