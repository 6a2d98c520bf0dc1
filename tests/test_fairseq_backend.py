"""fairseq as a training backend (docs/fairseq.md): the command line a preset maps to, the
cross-check arithmetic, and (with fairseq installed) lenex's position schemes inside the fairseq
decoder, identical initialisation, and the checkpoint conversion against fairseq's own eval-lm.

The fairseq tests skip when fairseq is not installed, unless LENEX_REQUIRE_FAIRSEQ=1 (CI, after
`make setup-fairseq`), where a missing fairseq fails them."""

import json
import math
import os
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
import torch
import yaml

from lenex.fairseq_backend import INSTALL_HINT, require_fairseq
from lenex.fairseq_backend.binarize import N_SPECIAL, dictionary_lines
from lenex.fairseq_backend.command import PLUGIN_DIR, fairseq_train_command, model_arguments, preset_command
from lenex.fairseq_backend.crosscheck import (budget_sentence, direction, gather, relative_difference, render,
                                              seed_spread)

SCHEMES = ["sinusoidal", "learned", "alibi", "rope", "xpos", "none", "sandwich", "smoothed_sandwich", "kerple", "t5"]


def fairseq_or_skip():
    if os.environ.get("LENEX_REQUIRE_FAIRSEQ") == "1":
        import fairseq  # noqa: F401  CI installed it: its absence is a failure

        return
    pytest.importorskip("fairseq", reason=INSTALL_HINT)


def _value(argv, flag):
    return argv[argv.index(flag) + 1]


def test_paper_preset_gives_the_lex_table7_command_line():
    argv = preset_command("paper", "lex", "xpos")
    expected = {"--decoder-layers": "24", "--decoder-embed-dim": "1024", "--decoder-ffn-embed-dim": "4096",
                "--decoder-attention-heads": "16", "--tokens-per-sample": "1024", "--lr": "0.0003",
                "--warmup-updates": "20000", "--max-update": "50000", "--total-num-update": "50000",
                "--adam-betas": "(0.9, 0.98)", "--adam-eps": "1e-06", "--clip-norm": "2.0",
                "--weight-decay": "0.01", "--lr-scheduler": "polynomial_decay", "--lenex-position": "xpos",
                "--arch": "lenex_lm", "--task": "language_modeling", "--distributed-world-size": "8"}
    assert {flag: _value(argv, flag) for flag in expected} == expected
    # 512 sequences per update (LEX: 0.5M tokens per batch) = 16 per pass x 4 accumulated x 8 GPUs
    assert int(_value(argv, "--batch-size")) * int(_value(argv, "--update-freq")) * 8 == 512
    assert "--cpu" not in argv and "--bf16" in argv


def test_docs_print_the_paper_command_line_the_code_builds():
    assert shlex.join(preset_command("paper", "lex", "xpos")) in open("docs/fairseq.md").read()


def test_command_refuses_a_batch_that_micro_batches_do_not_divide():
    with pytest.raises(ValueError, match="batch_size 10 does not split into 1 GPU"):
        fairseq_train_command({"n_layer": 1, "d_model": 8, "n_head": 2, "d_ff": 16, "position": "rope",
                               "train_length": 8}, {"steps": 2, "lr": 1e-3, "batch_size": 10,
                                                    "micro_batch_size": 4}, "bin", "save", cpu=True)
    with pytest.raises(ValueError, match="does not split into 4 GPU"):
        fairseq_train_command({"n_layer": 1, "d_model": 8, "n_head": 2, "d_ff": 16, "position": "rope",
                               "train_length": 8}, {"steps": 2, "lr": 1e-3, "batch_size": 10}, "bin", "save",
                              cpu=False, world_size=4)


def test_crosscheck_arithmetic_against_hand_values():
    assert relative_difference(100.0, 110.0) == pytest.approx(0.10)
    assert relative_difference(200.0, 150.0) == pytest.approx(-0.25)
    assert seed_spread([90.0, 110.0]) == pytest.approx(0.20)  # 20 / 100
    assert direction(50.0, 80.0) == "rises" and direction(50.0, 40.0) == "falls"


def _fake_run(root, backend, seed, variant, ppl_by_length: dict, masks=("causal",), curve=((10, 7.0), (20, 6.5))):
    """The files the cross-check rules leave for one model: its evaluations and training metrics."""
    base = root / f"results/tiny/crosscheck/{backend}/s{seed}"
    evaluations = []
    for mask in masks:
        for length, ppl in ppl_by_length.items():
            path = base / f"eval/lex/{variant}/pg22/{mask}/L{length}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"variant": variant, "mask": mask, "length": length, "ppl": ppl}))
            evaluations.append(str(path))
    metrics = base / f"train/lex/{variant}/metrics.jsonl"
    metrics.parent.mkdir(parents=True, exist_ok=True)
    metrics.write_text("".join(json.dumps({"step": s, "valid_loss": v}) + "\n" for s, v in curve))
    return evaluations, str(base / f"models/lex/{variant}.pt")


def test_crosscheck_page_from_run_files(tmp_path):
    runs = {("lenex", 1): {8: 120.0, 16: 100.0, 32: 130.0}, ("lenex", 2): {8: 118.0, 16: 104.0, 32: 128.0},
            ("fairseq", 1): {8: 125.0, 16: 108.0, 32: 90.0}, ("fairseq", 2): {8: 121.0, 16: 112.0, 32: 95.0}}
    evaluations, models = [], []
    for (backend, seed), ppl in runs.items():
        files, model = _fake_run(tmp_path, backend, seed, "rope", ppl)
        evaluations += files
        models.append(model)
    spec = {"preset": "tiny", "corpus": "pg22", "variants": ["rope"], "backends": ["lenex", "fairseq"],
            "seeds": [1, 2], "train_length": 16}
    result = gather(spec, evaluations, models)["variants"]["rope"]
    at_train = result["summary"]["causal"]["16"]
    assert at_train["mean"] == {"lenex": 102.0, "fairseq": 110.0}
    assert at_train["difference"] == pytest.approx(8 / 102)  # 7.8%: within 10%
    assert at_train["seed_spread"]["lenex"] == pytest.approx(4 / 102)
    assert result["within_tiny_tolerance"] and not result["within_seed_spread"]
    assert result["direction_beyond_train"] == {"lenex": "rises", "fairseq": "falls"}
    assert result["valid_curve"]["fairseq"]["2"] == [[10, 7.0], [20, 6.5]]
    page = render(gather(spec, evaluations, models))
    assert "| rope | 102.00 | 110.00 | +7.8% | 3.9% | 3.6% | yes | no | rises / falls |" in page


def test_crosscheck_page_names_the_training_budget():
    spec = {"train_length": 64, "train": {"steps": 4096, "batch_size": 16, "lr": 0.002, "warmup": 410}}
    # 4096 x 16 x 64 = 4,194,304 tokens
    assert budget_sentence(spec) == ("Each model trained 4,096 steps of 16 x L_tr tokens (4,194,304 tokens; "
                                     "peak lr 0.002, 410 warmup steps). ")
    assert budget_sentence({"train_length": 64}) == ""  # a spec from before budgets were recorded


def _train_config_printed(stdout: str) -> dict:
    """The --train-config JSON of the one training command a `snakemake -n -p` run printed."""
    line = next(line for line in stdout.splitlines() if "--train-config" in line)
    words = shlex.split(line.split(" > ")[0])
    return json.loads(words[words.index("--train-config") + 1])


def test_crosscheck_budget_lays_the_presets_crosscheck_train_over_lex(tmp_path):
    """The workstation cross-check lays its own `crosscheck.train` over LEX's training (config/presets/workstation.yaml):
    its logging and validation interval is the cross-check's, LEX's own models keep theirs."""
    from lenex.experiment.presets import paper_view
    from test_workflow import REPO, scratch_workflow, snakemake

    lenex_model = "results/workstation/crosscheck/lenex/s2/models/lex/rope.pt"
    run = snakemake("-n", "-p", "--forceall", lenex_model, cwd=scratch_workflow(tmp_path))
    assert run.returncode == 0, run.stderr
    preset = yaml.safe_load((REPO / "config/presets/workstation.yaml").read_text())
    own, lex = preset["crosscheck"]["train"], paper_view(preset, "lex")["train"]
    assert (own["steps"], own["log_every"]) != (lex["steps"], lex["eval_every"])  # else the test could not tell
    train = _train_config_printed(run.stdout)
    assert (train["steps"], train["warmup"], train["seed"], train["backend"]) == (own["steps"], own["warmup"], 2, "lenex")
    assert train["eval_every"] == train["log_every"] == own["log_every"]
    lex_model = "results/workstation/models/lex/rope/seed1.pt"
    run = snakemake("-n", "-p", "--forceall", lex_model, cwd=scratch_workflow(tmp_path))
    assert run.returncode == 0, run.stderr
    lex_train = _train_config_printed(run.stdout)
    assert (lex_train["steps"], lex_train["log_every"], lex_train["eval_every"]) == (
        lex["steps"], lex["log_every"], lex["eval_every"])


def test_dictionary_lists_lenex_ids_in_order():
    assert dictionary_lines(3) == "0 1\n1 1\n2 1\n"


def test_missing_fairseq_stops_with_the_setup_command(monkeypatch):
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(SystemExit, match=r"make setup-fairseq"):
        require_fairseq()


# ---- with fairseq installed ------------------------------------------------------------------

def _fairseq_model(tmp_path, model_cfg: dict, vocab: int, seed: int | None = None):
    """The `lenex_lm` model built by fairseq's own task API from a command line."""
    fairseq_or_skip()
    from fairseq import options, tasks, utils
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    data = tmp_path / "bin"
    data.mkdir(exist_ok=True)
    (data / "dict.txt").write_text(dictionary_lines(vocab))
    argv = [str(data), "--user-dir", str(PLUGIN_DIR), *model_arguments(model_cfg, eot=vocab - 1),
            "--task", "language_modeling", "--tokens-per-sample", str(model_cfg["train_length"]), "--cpu"]
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(options.get_training_parser(), argv))
    task = tasks.setup_task(cfg.task)
    if seed is not None:
        utils.set_torch_seed(seed)  # what fairseq_cli.train does before building the model
    return task.build_model(cfg.model).eval()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_position_scheme_inside_fairseq_gives_lenex_attention_logits(tmp_path, scheme):
    from lenex.config import ModelConfig
    from lenex.masks import build_mask
    from lenex.model import LanguageModel

    vocab, length = 40, 12
    model_cfg = {"n_layer": 2, "d_model": 16, "n_head": 2, "d_ff": 32, "train_length": length, "position": scheme}
    fs_model = _fairseq_model(tmp_path, model_cfg, vocab)
    lenex = LanguageModel(ModelConfig(**model_cfg, vocab_size=vocab)).eval()
    lenex.load_state_dict({k.removeprefix("decoder.lm."): v for k, v in fs_model.state_dict().items()})
    ids = torch.randint(0, vocab, (2, length), generator=torch.Generator().manual_seed(0))
    inner = fs_model.decoder.lm
    mask = build_mask("causal", {})
    with torch.no_grad():
        got, expected = [], []  # each layer's (input, attention logits before the mask)
        fs_ids = fs_model.decoder.lenex_ids(ids + N_SPECIAL)
        inner.inspect(fs_ids, lambda v: got.append((v.input, v.logits())), mask=mask)
        lenex.inspect(ids, lambda v: expected.append((v.input, v.logits())), mask=mask)
        assert len(got) == len(expected) == 2
        for (fs_input, fs_logits), (lx_input, lx_logits) in zip(got, expected):
            torch.testing.assert_close(fs_input, lx_input, rtol=0, atol=0)
            torch.testing.assert_close(fs_logits, lx_logits, rtol=0, atol=0)
        # fairseq's output: the 4 special symbols at -inf, then exactly lenex's logits
        out = fs_model(ids + N_SPECIAL)[0]
        torch.testing.assert_close(out[..., N_SPECIAL:], lenex(ids)[0], rtol=0, atol=0)
    assert torch.isneginf(out[..., :N_SPECIAL]).all()


def test_a_special_symbol_enters_lenex_as_end_of_text(tmp_path):
    model_cfg = {"n_layer": 1, "d_model": 8, "n_head": 2, "d_ff": 16, "train_length": 8, "position": "rope"}
    decoder = _fairseq_model(tmp_path, model_cfg, vocab=20).decoder
    assert decoder.lenex_ids(torch.tensor([2, 4, 23])).tolist() == [19, 0, 19]


def test_fairseq_builds_the_initial_weights_lenex_builds_for_the_seed(tmp_path):
    from lenex.config import ModelConfig
    from lenex.model import LanguageModel

    model_cfg = {"n_layer": 2, "d_model": 16, "n_head": 2, "d_ff": 32, "train_length": 12, "position": "xpos"}
    fs_state = _fairseq_model(tmp_path, model_cfg, vocab=40, seed=3).state_dict()
    torch.manual_seed(3)  # what lenex.training.train does before building the model
    lenex_state = LanguageModel(ModelConfig(**model_cfg, vocab_size=40)).state_dict()
    for name, tensor in lenex_state.items():
        torch.testing.assert_close(fs_state[f"decoder.lm.{name}"], tensor, rtol=0, atol=0)


def _run(argv):
    done = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def _fairseq_blocks(stream: np.ndarray, length: int, eot: int):
    """fairseq's `--sample-break-mode none` blocks: targets stream[s:e], inputs the token before
    each (end-of-text at the start of the stream)."""
    for start in range(0, len(stream), length):
        targets = stream[start:start + length]
        previous = np.concatenate([[eot] if start == 0 else stream[start - 1:start], targets[:-1]])
        yield torch.from_numpy(previous.astype(np.int64))[None], torch.from_numpy(targets.astype(np.int64))[None]


def test_converted_checkpoint_evaluates_to_fairseq_eval_lm_loss(tmp_path):
    fairseq_or_skip()
    from corpus_fixture import make_corpus
    from lenex.records.checkpoint import load_model
    from lenex.data.store import load_split
    from lenex.fairseq_backend.binarize import binarize
    from lenex.fairseq_backend.convert import convert

    data = make_corpus(tmp_path, n_docs=6, words_per_doc=300)
    binarize(data, tmp_path / "bin")
    from fairseq.data.indexed_dataset import MMapIndexedDataset

    valid = load_split(data, "valid")
    stored = MMapIndexedDataset(str(tmp_path / "bin" / "valid"))
    assert np.concatenate([np.asarray(stored[i]) for i in range(len(stored))]).tolist() == (
        np.asarray(valid.tokens, dtype=np.int64) + N_SPECIAL).tolist()

    length, save = 16, tmp_path / "save"
    model_cfg = {"n_layer": 1, "d_model": 16, "n_head": 2, "d_ff": 32, "train_length": length, "position": "xpos"}
    train_cfg = {"steps": 3, "batch_size": 2, "lr": 1e-3, "warmup": 1, "log_every": 1, "checkpoint_every": 3}
    eot = valid.meta["dataset"]["eot_token"]
    argv = fairseq_train_command(model_cfg, train_cfg, tmp_path / "bin", save, cpu=True, eot=eot)
    _run(["fairseq_cli.train", *argv[1:]])
    out = _run(["fairseq_cli.eval_lm", str(tmp_path / "bin"), "--path", str(save / "checkpoint_last.pt"),
                "--user-dir", str(PLUGIN_DIR), "--gen-subset", "valid", "--tokens-per-sample", str(length),
                "--sample-break-mode", "none", "--batch-size", "4", "--cpu", "--num-workers", "0"])
    tokens, bits = re.search(r"Evaluated (\d+) tokens", out), re.search(r"Loss \(base 2\): ([0-9.]+)", out)
    assert tokens and bits, out[-2000:]
    fairseq_tokens, fairseq_bits = int(tokens[1]), float(bits[1])

    # as lenex.fairseq_backend.train converts: the corpus it can score checked, the run's summary
    # (which records the training `data` folder) laid into the checkpoint
    convert(save / "checkpoint_last.pt", tmp_path / "lenex.pt", data, data=str(data))
    model, payload = load_model(tmp_path / "lenex.pt")
    assert payload["data"] == str(data)
    assert payload["step"] == 3 and model.config.position == "xpos" and model.config.train_length == length
    total, count = 0.0, 0
    for inputs, targets in _fairseq_blocks(np.asarray(valid.tokens), length, eot):
        total += model.token_nll(inputs, targets).double().sum().item()
        count += targets.numel()
    assert count == fairseq_tokens
    assert total / count / math.log(2) == pytest.approx(fairseq_bits, abs=6e-5)  # eval-lm prints 4 decimals


def test_converter_refuses_a_checkpoint_of_another_model(tmp_path):
    from lenex.fairseq_backend.convert import lenex_model

    torch.save({"model": {"decoder.embed_tokens.weight": torch.zeros(2, 2)}, "cfg": {"model": {}}}, tmp_path / "x.pt")
    with pytest.raises(ValueError, match="not a lenex_lm fairseq checkpoint"):
        lenex_model(tmp_path / "x.pt")


def _workflow_with_fairseq_preset(tmp_path):
    """A scratch workflow whose `tiny` preset trains with fairseq (everything else linked)."""
    from test_workflow import REPO, scratch_workflow

    config = tmp_path / "config"
    config.mkdir()
    for item in (REPO / "config").iterdir():
        if item.name != "presets":
            (config / item.name).symlink_to(item)
    (config / "presets").mkdir()
    for item in (REPO / "config" / "presets").iterdir():
        text = item.read_text()
        if item.name == "tiny.yaml":
            text = re.sub(r"^train:\n", "train:\n  backend: fairseq\n", text, count=1, flags=re.M)
            assert "backend: fairseq" in text
        (config / "presets" / item.name).write_text(text)
    return scratch_workflow(tmp_path)


def test_backend_fairseq_in_a_preset_trains_through_fairseq(tmp_path):
    fairseq_or_skip()
    from test_workflow import job_counts, snakemake

    workdir = _workflow_with_fairseq_preset(tmp_path)
    run = snakemake("-n", "-p", "--forceall", "results/tiny/models/lex/xpos/seed1.pt", cwd=workdir)
    assert run.returncode == 0, run.stderr
    assert job_counts(run.stdout)["binarize_fairseq"] == 1 and job_counts(run.stdout)["train"] == 1
    assert "python -m lenex.pipeline.launch lenex.fairseq_backend.train --bin results/tiny/data-fairseq/train_mix" in run.stdout


def test_crosscheck_dry_run_trains_both_backends_twice(tmp_path):
    fairseq_or_skip()
    from test_workflow import job_counts, scratch_workflow, snakemake

    run = snakemake("-n", "--forceall", "results/tiny/crosscheck/fairseq.md", cwd=scratch_workflow(tmp_path))
    assert run.returncode == 0, run.stderr
    counts = job_counts(run.stdout)
    # 4 variants x 2 backends x 2 seeds; 5 lengths each, + xPos's BCA at 2 and 4 x L_tr
    assert (counts["crosscheck_train"], counts["crosscheck_evaluate"], counts["binarize_fairseq"]) == (16, 88, 1)
