"""The Python stages of scripts/gpu/check.sh (docs/gpu.md): each writes one JSON file to --out,
rewritten after every row and on SIGTERM, and skips a row it predicts would outlast --seconds
(the shell's `timeout` is the backstop). `--dry-run` runs a stage on the CPU at toy sizes in
seconds (tests/test_gpu_check.py, scripts/gpu/rehearse.sh), to prove it runs.

    python scripts/gpu/check.py env|cuda-tests|bench|train-eval|segmented-memory --out DIR [--seconds S] [--dry-run]
    python scripts/gpu/check.py summary --out DIR     # summary.json from the stages' JSON and exits

- env: torch, CUDA, the GPU, and its measured bf16 matmul peak (the MFU denominator);
- cuda-tests: `pytest -m cuda tests/test_fused_attention.py -v`, each test's verdict recorded as
  pytest prints it (a stage stopped at its box keeps the verdicts it had);
- bench: the trainer's step (the model compiled whole, as lenex.training.train runs it) at the
  `gpu` preset's own shapes (config/presets/gpu.yaml: LEX's and the receptive field's), every
  position scheme beside Hugging Face GPT-2 with SDPA; each row's attention plan (flex, sdpa,
  reference) and the graphs compiled for it; the median of >= 10 CUDA-event-timed steps after
  warm-up, the steady-state peak memory (after AdamW's moments exist), tokens/s and MFU;
- train-eval: a short training through lenex.training.train.train, its seconds split into the
  first interval's compiling and the steady steps, then the loss and peak memory at 1, 2, 4 and
  8 x L_tr;
- segmented-memory: continued-pretraining steps of each released 1.x-billion model (random weights
  of its published shape, nothing downloaded) at the gpu preset's micro-batch with its memory
  savings, and at the preset's worst case (`full` at 4 L_t), the steady-state peak beside
  lenex.segmented.memory's estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from lenex.config import ModelConfig, TrainConfig  # noqa: E402
from lenex.device import autocast  # noqa: E402
from lenex.files import atomic_write_text, read_yaml  # noqa: E402

PRESET = ROOT / "config/presets/gpu.yaml"
STAGES = ("env", "cuda-tests", "bench", "train-eval", "segmented-memory")
#: The bench's order within a shape: Hugging Face GPT-2 first (the ratio's denominator), then the
#: schemes the phenomena run trains, then the rest; under a tight box the first rows are the ones kept.
SCHEMES = ["rope", "alibi", "xpos", "sinusoidal", "learned", "t5", "kerple", "sandwich", "smoothed_sandwich", "none"]
HF_GPT2 = "hf_gpt2_sdpa"
VOCAB = 50257
WARMUP_STEPS = 2  # AdamW's moments are allocated by its first step: the peak is read after these
TIMED_STEPS = 10
GIB = 2**30


class Shape(NamedTuple):
    layers: int
    width: int
    heads: int
    d_ff: int
    length: int
    batch: int


class Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def refuses(self, predicted: float) -> str | None:
        """Why a row predicted to take `predicted` seconds is not started (None: it fits)."""
        left = self.left()
        if predicted > left:
            return f"skipped: predicted {predicted:.0f} s, {max(left, 0):.0f} s left in the stage's box"
        return None


def predict_seconds(history: list[float], prior: float) -> float:
    """A row's predicted seconds: the longest like row so far (compiles vary: the longest is the
    safe guess), or `prior` before any."""
    return max(history) if history else prior


class StageRecord:
    """A stage's JSON, rewritten whole (atomically) after every row, so a stage stopped at any
    point leaves what it had: `status` is "running" until `finish`, "interrupted: SIGTERM" if
    the signal came. A row with an "error" key fails the stage (`check.py summary`)."""

    def __init__(self, out: Path, stage: str, dry: bool, **header):
        self.path = Path(out) / f"{stage.replace('-', '_')}.json"
        self.started = time.perf_counter()
        self.current: str | None = None
        self.on_interrupt = []  # callables run before the SIGTERM flush (a child to stop)
        self.data = {"stage": stage, "dry_run": dry, "status": "running", **header, "rows": {}}
        self.flush()

    def begin(self, key: str) -> dict:
        self.current = key
        row = self.data["rows"][key] = {}
        return row

    def row(self, key: str, value: dict) -> None:
        self.data["rows"][key] = value
        self.current = None
        self.flush()

    def flush(self) -> None:
        self.data["seconds"] = time.perf_counter() - self.started
        self.data["row_errors"] = len(row_errors(self.data))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path, json.dumps(self.data, indent=1, default=str) + "\n")

    def finish(self) -> None:
        self.data["status"] = "complete"
        self.flush()
        print(json.dumps({"stage": self.data["stage"], "written": str(self.path), "row_errors": self.data["row_errors"]}))

    def interrupt(self, reason: str) -> None:
        for stop in self.on_interrupt:
            stop()
        if self.current is not None:
            self.data["rows"][self.current] = {**self.data["rows"].get(self.current, {}),
                                               "interrupted": f"{reason} while this row ran"}
        self.data["status"] = f"interrupted: {reason}"
        self.flush()


def row_errors(data: dict) -> list[str]:
    return [key for key, row in data.get("rows", {}).items() if isinstance(row, dict) and "error" in row]


def flush_on_sigterm(record: StageRecord) -> None:
    """On SIGTERM (the shell's `timeout`), write what the stage has, marked interrupted, and exit
    143 at once: a compile in flight would otherwise outlast the 10 s before SIGKILL."""

    def handler(signum, frame):
        record.interrupt("SIGTERM")
        sys.stdout.flush()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


# --- timing and memory at steady state ------------------------------------------------------------

class HostEvent:
    """torch.cuda.Event's timing interface on the host clock (the CPU dry run)."""

    def record(self) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: HostEvent) -> float:
        return (end.at - self.at) * 1e3


def new_event(device):
    return torch.cuda.Event(enable_timing=True) if device.type == "cuda" else HostEvent()


def median_ms(pairs) -> float:
    """The median of each (start, end) event pair's elapsed milliseconds."""
    if not pairs:
        raise ValueError("no timed steps: the median of nothing")
    return statistics.median(start.elapsed_time(end) for start, end in pairs)


class PeakMemory:
    """The CUDA allocator's peak since `reset` (None on the CPU, which has no such counter)."""

    def __init__(self, device):
        self.device = device

    def reset(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)

    def read(self) -> int | None:
        if self.device.type != "cuda":
            return None
        torch.cuda.synchronize(self.device)
        return torch.cuda.max_memory_allocated(self.device)


def steady_state(step, warmup: int, steps: int, events, memory, clock=time.perf_counter, sync=lambda: None) -> dict:
    """Run `warmup` steps (compiling, AdamW's moments allocated), then reset the peak and time
    `steps` more, each between two events: the median step, the steps' peak memory (not the first
    step's, which has no optimizer state yet) and the warm-up's seconds (compiling included)."""
    if warmup < 1 or steps < 1:
        raise ValueError(f"steady_state needs warmup >= 1 and steps >= 1, got {warmup} and {steps}")
    began = clock()
    for _ in range(warmup):
        step()
    sync()
    warmup_seconds = clock() - began
    memory.reset()
    pairs = []
    for _ in range(steps):
        start, end = events(), events()
        start.record()
        step()
        end.record()
        pairs.append((start, end))
    pairs[-1][1].synchronize()
    times = [a.elapsed_time(b) for a, b in pairs]
    peak = memory.read()
    return {"warmup_steps": warmup, "warmup_seconds": warmup_seconds, "timed_steps": steps,
            "step_ms_median": median_ms(pairs), "step_ms": times,
            "peak_gib": None if peak is None else peak / GIB}


# --- env -----------------------------------------------------------------------------------------

def matmul_peak(device, size: int, reps: int) -> float:
    """FLOP/s of a square bf16 (CPU: fp32) matmul: the median of `reps` event-timed products after one."""
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    a, b = (torch.randn(size, size, device=device, dtype=dtype) for _ in range(2))
    timing = steady_state(lambda: a @ b, 1, reps, lambda: new_event(device), PeakMemory(torch.device("cpu")),
                          sync=lambda: _sync(device))
    return 2 * size ** 3 / (timing["step_ms_median"] / 1e3)


def stage_env(out, device, dry: bool, deadline: Deadline) -> StageRecord:
    record = StageRecord(out, "env", dry, python=platform.python_version(), torch=torch.__version__,
                         cuda=torch.version.cuda, device=str(device))
    flush_on_sigterm(record)
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        record.data.update(gpu=props.name, memory_gib=props.total_memory / GIB, capability=[props.major, props.minor])
    for package in ("transformers", "numpy", "triton", "yaml"):
        try:
            record.data[package] = __import__(package).__version__
        except ImportError as err:
            record.data[package] = f"missing: {err}"
    row = record.begin("matmul_peak")
    try:
        row["peak_flops"] = matmul_peak(device, 256 if dry else 8192, 3 if dry else 10)
        record.data["peak_flops"] = row["peak_flops"]
    except Exception as err:  # noqa: BLE001 - recorded, the stage fails on it
        row["error"] = f"{type(err).__name__}: {str(err)[:300]}"
    record.row("matmul_peak", row)
    record.finish()
    return record


# --- cuda-tests ----------------------------------------------------------------------------------

VERDICT = r"PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS"
_VERDICT_AFTER = re.compile(rf"^(?P<id>\S+::\S+)\s+(?P<verdict>{VERDICT})\b")  # pytest -v
_VERDICT_BEFORE = re.compile(rf"^\[gw\d+\]\s+\[\s*\d+%\]\s+(?P<verdict>{VERDICT})\s+(?P<id>\S+::\S+)")  # xdist -v
_COLLECTED = re.compile(r"collected (\d+) items?(?: / (\d+) deselected)?|\d+ workers \[(\d+) items?\]")
_WORST = ["PASSED", "XFAIL", "SKIPPED", "XPASS", "FAILED", "ERROR"]


def parse_verdict(line: str) -> tuple[str, str] | None:
    """(test id, verdict) from one line of `pytest -v` output (plain or xdist), else None."""
    found = _VERDICT_AFTER.match(line.strip()) or _VERDICT_BEFORE.match(line.strip())
    return (found["id"], found["verdict"]) if found else None


def parse_selected(line: str) -> int | None:
    """How many tests a `collected N items / M deselected` (or xdist `K workers [N items]`) line selects."""
    found = _COLLECTED.search(line)
    if not found:
        return None
    if found[3] is not None:
        return int(found[3])
    return int(found[1]) - int(found[2] or 0)


def _xdist_workers(dry: bool) -> list[str]:
    """Cold compiles are CPU-bound, one test at a time: spread over the GPU machine's cores when
    pytest-xdist is there (it is on the H200 image), one process elsewhere."""
    try:
        import xdist  # noqa: F401
    except ImportError:
        return ["-p", "no:xdist"] if not dry else []
    workers = os.environ.get("LENEX_CHECK_CUDA_WORKERS", "1" if dry else str(min(8, os.cpu_count() or 1)))
    return ["-n", workers] if workers != "1" else ["-p", "no:xdist"]


def stage_cuda_tests(out, device, dry: bool, deadline: Deadline, tests=None) -> StageRecord:
    tests = tests or [str(ROOT / "tests/test_fused_attention.py")]
    command = [sys.executable, "-u", "-m", "pytest", "-m", "cuda", *tests, "-v", "-rA", "-p", "no:cacheprovider",
               "--junitxml", str(Path(out) / "cuda_tests.xml"), *_xdist_workers(dry)]
    record = StageRecord(out, "cuda-tests", dry, command=" ".join(command), selected=None)
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             bufsize=1)

    def stop_child():  # SIGINT: pytest stops, prints its summary and writes the junit XML
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
            try:
                child.wait(5)
            except subprocess.TimeoutExpired:
                child.kill()

    record.on_interrupt.append(stop_child)
    flush_on_sigterm(record)
    stopped_for_time = False
    for line in child.stdout:
        print(line, end="")
        selected = parse_selected(line)
        if selected is not None and record.data["selected"] is None:
            record.data["selected"] = selected
            record.flush()
        verdict = parse_verdict(line)
        if verdict:
            test, said = verdict
            before = record.data["rows"].get(test, {}).get("verdict", "PASSED")
            worst = max(before, said, key=_WORST.index)  # a teardown ERROR after PASSED stays an error
            row = {"verdict": worst}
            if worst in ("FAILED", "ERROR"):
                row["error"] = f"{worst} (check.log has its traceback)"
            record.row(test, row)
        if deadline.left() < 3 and not stopped_for_time:
            stopped_for_time = True
            stop_child()
    child.wait()
    counts = {}
    for row in record.data["rows"].values():
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    record.data.update(exit=child.returncode, verdicts=counts,
                       not_run=None if record.data["selected"] is None
                       else record.data["selected"] - len(record.data["rows"]))
    if stopped_for_time:
        record.data["status"] = "interrupted: the stage's time box"
        record.flush()
    elif child.returncode not in (0, 5):  # 5: none selected or collected
        record.data["pytest_exit"] = f"pytest exited {child.returncode}"
        record.finish()
    else:
        record.finish()
    return record


# --- bench ---------------------------------------------------------------------------------------

def preset_shapes(preset: dict, where: str = str(PRESET)) -> dict[str, Shape]:
    """The `gpu` preset's training shapes: LEX's (the preset's top-level model, micro-batch) and the
    receptive field's (its papers: override). Segmented trains released HF models (segmented-memory)."""

    def pick(mapping: dict, key: str, path: str):
        if key not in mapping:
            raise ValueError(f"{where}: {path}{key} is missing; the bench reads the preset's shapes from it")
        return mapping[key]

    def shape(model: dict, train: dict, path: str) -> Shape:
        batch = train.get("micro_batch_size") or pick(train, "batch_size", f"{path}train.")
        return Shape(*(int(pick(model, key, f"{path}model.")) for key in ("n_layer", "d_model", "n_head", "d_ff",
                                                                            "train_length")), int(batch))

    model, train = pick(preset, "model", ""), pick(preset, "train", "")
    field = pick(pick(preset, "papers", ""), "receptive-field", "papers.")
    return {"lex": shape(model, train, ""),
            "receptive-field": shape({**model, **field.get("model", {})}, {**train, **field.get("train", {})},
                                     "papers.receptive-field.")}


def dry_shape(shape: Shape) -> Shape:
    """The CPU dry run's stand-in for a preset shape: one layer, heads of 16 (flex's CUDA floor)."""
    return Shape(1, 32, 2, 64, 16, 2)


def dynamo_counts() -> dict:
    """dynamo's process-wide counters (graphs compiled, graph breaks) and flex's own compiled
    graphs (`lenex.model.flex.compile_count`, where that exists); a row records their change."""
    counts = {"dynamo_graphs": None, "graph_breaks": None, "flex_compiled_graphs": None,
              "flex_calls_compiled": None, "flex_calls_eager": None}
    try:
        from torch._dynamo.utils import counters
        counts.update(dynamo_graphs=counters["stats"]["unique_graphs"],
                      graph_breaks=sum(counters["graph_break"].values()))
    except (ImportError, AttributeError, KeyError):
        pass
    from lenex.model import flex
    counter = getattr(flex, "compile_count", None)
    counts["flex_compiled_graphs"] = counter() if counter else None
    # flex_attend calls run outside a compiled caller (after a graph break, say), by how they ran:
    # on CUDA "eager" is FlexAttention unfused.
    calls = getattr(flex, "call_counts", None)
    if calls:
        made = calls()
        counts.update(flex_calls_compiled=made.get("compiled", 0), flex_calls_eager=made.get("eager", 0))
    return counts


def counts_since(before: dict) -> dict:
    after = dynamo_counts()
    return {key: None if before[key] is None or after[key] is None else after[key] - before[key] for key in before}


def attention_record(model, length: int) -> dict:
    """Which path computes `model`'s attention at `length` (lenex.model.attention.attention_path:
    plan flex/sdpa/reference, fused or not, and why), or what is missing to say so."""
    from lenex.model import attention

    path = getattr(attention, "attention_path", None)
    if path is None:
        return {"plan": None, "why": "lenex.model.attention has no attention_path in this tree"}
    return path(model, length)


def _lenex_model(shape: Shape, position: str, device):
    from lenex.model import LanguageModel

    cfg = ModelConfig(n_layer=shape.layers, d_model=shape.width, n_head=shape.heads, d_ff=shape.d_ff,
                      vocab_size=VOCAB, dropout=0.0, position=position, train_length=shape.length)
    with torch.device(device):  # initialised where it runs: a 124M model's CPU init costs seconds
        return LanguageModel(cfg).train()


def reference_loss(model, x, device) -> float:
    """The loss of `model` on `x` through the reference attention (SDPA over additive masks), eager,
    bf16 autocast as the trainer's: what the compiled flex step's first loss is compared with."""
    kept = model.attention_kernel
    model.attention_kernel = "reference"
    try:
        with torch.no_grad(), autocast(device):
            return float(model(x, x)[1])
    finally:
        model.attention_kernel = kept


def _lenex_step(model, x, device):
    """The trainer's step: the model under CompiledForward (compiled whole on CUDA, eager on the
    CPU, as lenex.training.train decides), bf16 autocast, clipping, its fused AdamW. The losses
    are kept (on the device) for the comparison with the reference."""
    from lenex.training.speed import CompiledForward
    from lenex.training.train import build_optimizer

    forward = CompiledForward(model, device)
    optimizer = build_optimizer(model, TrainConfig(lr=1e-4, grad_clip=2.0))
    losses = []

    def step():
        with autocast(device):
            loss = forward(x, x)[1]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())

    return step, forward, losses


def _hf_step(shape: Shape, device):
    """Hugging Face GPT-2 as it is commonly trained: eager, SDPA attention, fused AdamW."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=VOCAB, n_positions=shape.length, n_embd=shape.width, n_layer=shape.layers,
                     n_head=shape.heads, n_inner=shape.d_ff, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel._from_config(cfg, attn_implementation="sdpa").to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    x = torch.randint(0, VOCAB, (shape.batch, shape.length), device=device)

    def step():
        with autocast(device):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def _free(device):
    if device.type == "cuda":
        torch.cuda.empty_cache()


def stage_bench(out, device, dry: bool, deadline: Deadline, peak: float | None, preset: Path = PRESET) -> StageRecord:
    from benchmarks.gpu_cost import flops_per_token

    shapes = preset_shapes(read_yaml(preset), str(preset))
    if dry:
        shapes = {name: dry_shape(shape) for name, shape in shapes.items()}
    warmup, steps = WARMUP_STEPS, (3 if dry else TIMED_STEPS)
    record = StageRecord(out, "bench", dry, preset=str(preset.relative_to(ROOT) if preset.is_relative_to(ROOT) else preset),
                         shapes={name: shape._asdict() for name, shape in shapes.items()}, warmup_steps=warmup,
                         timed_steps=steps, timing="CUDA events" if device.type == "cuda" else "host clock")
    flush_on_sigterm(record)
    peak = peak or matmul_peak(device, 256 if dry else 8192, 3 if dry else 10)
    record.data["peak_flops"] = peak
    priors = {"hf": 3 if dry else 30, "lenex": 10 if dry else 90}  # seconds of a row, compile included
    for name, shape in shapes.items():
        flops = flops_per_token(shape.layers, shape.width, shape.d_ff, VOCAB, shape.length)
        # Each scheme's plan first (cheap, nothing compiled): which path every scheme takes even
        # where the time box leaves its timing out.
        plans = record.begin(f"{name}/plans")
        for position in SCHEMES:
            try:
                model = _lenex_model(shape, position, device)
                plans[position] = attention_record(model, shape.length)
            except Exception as err:  # noqa: BLE001
                plans[position] = {"error": f"{type(err).__name__}: {str(err)[:300]}"}
            model = None
            _free(device)
        if any("error" in plan for plan in plans.values()):
            plans["error"] = "a scheme's plan could not be read: " + ", ".join(
                p for p, plan in plans.items() if isinstance(plan, dict) and "error" in plan)
        record.row(f"{name}/plans", plans)
        history = {"hf": [], "lenex": []}
        for contender in [HF_GPT2, *SCHEMES]:
            kind = "hf" if contender == HF_GPT2 else "lenex"
            key = f"{name}/{contender}"
            refused = deadline.refuses(predict_seconds(history[kind], priors[kind]))
            if refused:
                record.row(key, {"skipped": refused})
                continue
            row = record.begin(key)
            row.update(shape=name, contender=contender, flops_per_token=flops)
            began = time.perf_counter()
            before = dynamo_counts()
            try:
                if kind == "hf":
                    step = _hf_step(shape, device)
                else:
                    model = _lenex_model(shape, contender, device)
                    row["attention"] = plans.get(contender)
                    x = torch.randint(0, VOCAB, (shape.batch, shape.length), device=device)
                    row["reference_loss"] = reference_loss(model, x, device)
                    step, forward, losses = _lenex_step(model, x, device)
                row.update(steady_state(step, warmup, steps, lambda: new_event(device), PeakMemory(device),
                                        sync=lambda: _sync(device)))
                if kind == "lenex":
                    row["compile"] = forward.record
                    # The same weights and batch before any update: the trainer's path (compiled,
                    # flex where planned) against the reference, at the preset's shape in bf16.
                    row["first_step_loss"] = float(losses[0])
                    row["loss_gap_to_reference"] = abs(row["first_step_loss"] - row["reference_loss"])
                    if str(forward.record.get("why", "")).startswith("torch.compile failed"):
                        # It trained eagerly: the timing is not the compiled trainer's.
                        row["error"] = forward.record["why"]
                row.update(counts_since(before))
                tokens = shape.batch * shape.length / (row["step_ms_median"] / 1e3)
                row.update(tokens_per_s=tokens, mfu=tokens * flops / peak)
            except Exception as err:  # noqa: BLE001 - recorded once; the failing compile is not run again
                row["error"] = f"{type(err).__name__}: {str(err)[:300]}"
            finally:
                step = model = forward = losses = x = None
                _free(device)
            row["seconds"] = time.perf_counter() - began
            history[kind].append(row["seconds"])
            hf = record.data["rows"].get(f"{name}/{HF_GPT2}", {}).get("tokens_per_s")
            if kind == "lenex" and hf and "tokens_per_s" in row:
                row["over_hf_gpt2"] = row["tokens_per_s"] / hf
            record.row(key, row)
    record.finish()
    return record


# --- train-eval ----------------------------------------------------------------------------------

def synthetic_corpus(out: Path, n_tokens: int, seed: int = 0) -> Path:
    """A prepared corpus of a learnable stream (each document a repeated random phrase), GPT-2's
    vocabulary size, written as lenex.data.store writes one."""
    from lenex.data.store import DTYPE, corpus_draft, corpus_meta

    rng = np.random.default_rng(seed)
    with corpus_draft(out) as draft:
        splits = {}
        for split, size in (("train", n_tokens), ("valid", n_tokens // 4), ("test", n_tokens // 4)):
            docs = [np.tile(rng.integers(0, VOCAB - 1, 17), 256)[:4096] for _ in range(max(1, size // 4096))]
            tokens = np.concatenate([np.append(d, VOCAB - 1) for d in docs]).astype(DTYPE)
            offsets = np.cumsum([0] + [len(d) + 1 for d in docs])
            splits[split] = draft.write_split(split, tokens, offsets, [f"{split}{i}" for i in range(len(docs))],
                                              ["synthetic"] * len(docs))
        draft.write_meta(corpus_meta("synthetic", VOCAB, VOCAB - 1, source={"source": "synthetic"}, splits=splits))
    return out


def split_compile(records: list[dict], tokens_per_step: int) -> dict:
    """From a training's metrics (each log record's step and tokens/s over the interval since the
    previous one): the steady step's seconds (the median of the intervals after the first) and
    the compiling and warm-up in the first interval beyond that many steady steps."""
    if len(records) < 2:
        raise ValueError(f"split_compile needs at least 2 logged intervals, got {len(records)}: log more often")
    intervals, previous = [], 0
    for entry in records:
        steps = entry["step"] - previous
        intervals.append((steps, steps * tokens_per_step / entry["tokens_per_s"]))
        previous = entry["step"]
    steady = statistics.median(seconds / steps for steps, seconds in intervals[1:])
    first_steps, first_seconds = intervals[0]
    return {"first_interval_seconds": first_seconds, "steady_step_seconds": steady,
            "steady_tokens_per_s": tokens_per_step / steady, "compile_seconds": first_seconds - first_steps * steady}


def stage_train_eval(out, device, dry: bool, deadline: Deadline, peak: float | None = None) -> StageRecord:
    from benchmarks.gpu_cost import flops_per_token
    from lenex.training.train import train

    layers, width, heads, length = (1, 32, 2, 16) if dry else (6, 384, 6, 256)
    steps, batch, log_every = (4, 4, 1) if dry else (60, 32, 10)
    record = StageRecord(out, "train-eval", dry, shape=[layers, width, heads, length], steps=steps, batch=batch,
                         log_every=log_every, peak_flops=peak)
    flush_on_sigterm(record)
    flops = flops_per_token(layers, width, 4 * width, VOCAB, length)
    history = []
    with tempfile.TemporaryDirectory() as tmp:
        data = synthetic_corpus(Path(tmp) / "data", 20_000 if dry else 2_000_000)
        for index, position in enumerate(("alibi", "t5", "rope")):
            if index == 1 and "LENEX_COMPILE" not in os.environ:
                os.environ["LENEX_COMPILE"] = "0"  # the first run shows compiling; the others save its minute
            refused = deadline.refuses(predict_seconds(history, 5 if dry else 60))
            if refused:
                record.row(position, {"skipped": refused})
                continue
            model_cfg = ModelConfig(n_layer=layers, d_model=width, n_head=heads, d_ff=4 * width, vocab_size=VOCAB,
                                    dropout=0.0, position=position, train_length=length)
            cfg = TrainConfig(steps=steps, batch_size=batch, lr=1e-3, warmup=max(1, steps // 10), log_every=log_every,
                              checkpoint_every=steps, eval_batches=1)
            row = record.begin(position)
            started = time.perf_counter()
            try:
                summary = train(model_cfg, cfg, data, Path(tmp) / f"{position}.pt", Path(tmp) / position,
                                device=str(device))
                row.update(seconds=time.perf_counter() - started, final_loss=summary["final_loss"],
                           valid_loss=summary["valid_loss"], compile=summary.get("compile"),
                           attention_kernel=summary.get("attention_kernel"))
                metrics = [json.loads(line) for line in (Path(tmp) / position / "metrics.jsonl").read_text().splitlines()]
                row.update(split_compile([m for m in metrics if "tokens_per_s" in m], batch * length))
                if peak:
                    row["trainer_mfu"] = row["steady_tokens_per_s"] * flops / peak
                before = dynamo_counts()
                row["eval"] = _eval_lengths(Path(tmp) / f"{position}.pt", length, device)
                row["eval_compiled"] = counts_since(before)
            except Exception as err:  # noqa: BLE001
                row["error"] = f"{type(err).__name__}: {str(err)[:400]}"
            history.append(time.perf_counter() - started)
            record.row(position, row)
    record.finish()
    return record


def _eval_lengths(checkpoint: Path, length: int, device) -> list[dict]:
    """Loss and CUDA peak memory of one sequence at 1, 2, 4, 8 x L_tr (no grad, autocast)."""
    from lenex.records.checkpoint import load_model

    model = load_model(checkpoint)[0].to(device).eval()
    rows, memory = [], PeakMemory(device)
    for multiple in (1, 2, 4, 8):
        x = torch.randint(0, VOCAB - 1, (1, multiple * length), device=device)
        _free(device)
        memory.reset()
        with torch.no_grad(), autocast(device):
            loss = model(x, x)[1].item()
        peak = memory.read()
        rows.append({"multiple": multiple, "tokens": multiple * length, "loss": loss,
                     "peak_mib": None if peak is None else peak / 2**20})
    return rows


# --- segmented-memory ----------------------------------------------------------------------------

def segmented_cases(seg: dict, dry: bool) -> list[tuple[str, str, int, bool]]:
    """(row, model, tokens a sequence, with the savings) in the order the box keeps them: each
    released model at its L_t with the preset's savings, the preset's worst case (`full` at 4 L_t,
    the longest continued sequences), then Bloom without the savings (what they save)."""
    lengths = seg.get("train_lengths", {})
    cases = []
    for name in ("bloom", "pythia", "gpt2"):
        train_length = 16 if dry else lengths.get(name, 1024)
        cases.append((name, name, train_length, True))
        cases.append((f"{name} full at 4 L_t", name, 4 * train_length, True))
    cases.append(("bloom (no savings)", "bloom", 16 if dry else lengths.get("bloom", 1024), False))
    return cases


def stage_segmented_memory(out, device, dry: bool, deadline: Deadline) -> StageRecord:
    from lenex.hf.models import HFLanguageModel, tiny_random
    from lenex.segmented.memory import RELEASED, MemorySettings, peak_gib

    seg = read_yaml(PRESET)["papers"]["segmented"]["experiment"]
    continued = seg["continued"]
    micro = 1 if dry else continued["micro_batch_size"]
    savings = {"activation_checkpointing": continued["activation_checkpointing"],
               "loss_chunk_tokens": continued["loss_chunk_tokens"]}
    record = StageRecord(out, "segmented-memory", dry, micro_batch=micro, savings=savings,
                         warmup_steps=WARMUP_STEPS, timed_steps=2)
    flush_on_sigterm(record)
    history = []
    for key, model_name, length, saved in segmented_cases(seg, dry):
        refused = deadline.refuses(predict_seconds(history, 3 if dry else 30))
        if refused:
            record.row(key, {"skipped": refused})
            continue
        name = seg["hf_checkpoints"][model_name]
        row = record.begin(key)
        row.update(checkpoint=name, length=length, tokens_per_step=micro * length, savings=saved)
        began, model = time.perf_counter(), None
        try:
            if dry:
                model = tiny_random({"bloom": "bloom", "pythia": "gpt_neox", "gpt2": "gpt2"}[model_name],
                                    n_positions=max(64, length))
            else:
                model = HFLanguageModel(_released_shape(name, device, length), name)
            model = model.to(device).train()
            if saved:
                model.save_memory(**savings)
            row["estimate_gib"] = peak_gib(RELEASED[name], MemorySettings(
                micro, length, saved and savings["activation_checkpointing"],
                savings["loss_chunk_tokens"] if saved else None))
            row.update(_steady_steps(model, micro, length, device))
            if row.get("peak_gib") is not None:
                row["peak_over_estimate"] = row["peak_gib"] / row["estimate_gib"]
        except torch.cuda.OutOfMemoryError as err:
            row["error"] = f"out of memory: {str(err).splitlines()[0][:200]}"
        except Exception as err:  # noqa: BLE001
            row["error"] = f"{type(err).__name__}: {str(err)[:300]}"
        finally:
            model = None
            _free(device)
        history.append(time.perf_counter() - began)
        record.row(key, row)
    record.finish()
    return record


def _released_shape(name: str, device, length: int):
    """A randomly initialised model of the released checkpoint's published shape, built on `device`
    (GPT-2's learned positions as long as `length`: the full run's extended table)."""
    import transformers

    from lenex.segmented.memory import RELEASED

    arch = RELEASED[name]
    if "gpt2" in name:
        config = transformers.GPT2Config(n_layer=arch.n_layer, n_embd=arch.d_model, n_head=arch.n_head,
                                         n_inner=arch.d_ff, vocab_size=arch.vocab, n_positions=max(1024, length))
    elif "pythia" in name:
        config = transformers.GPTNeoXConfig(num_hidden_layers=arch.n_layer, hidden_size=arch.d_model,
                                            num_attention_heads=arch.n_head, intermediate_size=arch.d_ff,
                                            vocab_size=arch.vocab, tie_word_embeddings=False, rotary_pct=0.25,
                                            max_position_embeddings=max(2048, length))
    else:
        config = transformers.BloomConfig(n_layer=arch.n_layer, hidden_size=arch.d_model, n_head=arch.n_head,
                                          vocab_size=arch.vocab)
    with torch.device(device):
        return transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)


def _steady_steps(model, micro: int, length: int, device) -> dict:
    """Training steps as lenex.training.train does them (forward and backward under autocast, fused
    AdamW): the peak over the steps after AdamW's moments exist, and their median time."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=device.type == "cuda")
    vocab = model.hf.config.vocab_size
    x = torch.randint(0, vocab, (micro, length), device=device)
    losses = []

    def step():
        with autocast(device):
            loss = model(x, x)[1]
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())

    result = steady_state(step, WARMUP_STEPS, 2, lambda: new_event(device), PeakMemory(device),
                          sync=lambda: _sync(device))
    return {**result, "loss": float(losses[-1])}


# --- summary -------------------------------------------------------------------------------------

def judge_stage(launch: dict, data: dict | None) -> dict:
    """A stage's line in summary.json: passed only when it exited 0 and its JSON is complete with no
    row error (a cuda-tests stage also with a verdict for every selected test, none skipped unless
    it is the CPU dry run)."""
    line = dict(launch)
    if launch.get("status", "").startswith("skipped"):
        return line
    if data is None:
        line["status"] = f"failed: no JSON written (exit {launch.get('exit')})"
        return line
    errors = row_errors(data)
    rows = data.get("rows", {})
    line.update(rows=len(rows), row_errors=len(errors), errored_rows=errors[:20],
                rows_skipped=sum(1 for r in rows.values() if isinstance(r, dict) and "skipped" in r))
    problems = []
    if launch.get("exit") in (124, 137, 143):
        problems.append("stopped at its time box")
    elif launch.get("exit") != 0:
        problems.append(f"exit {launch.get('exit')}")
    if data.get("status") != "complete":
        problems.append(f"JSON {data.get('status')}")
    if errors:
        problems.append(f"{len(errors)} row error{'s' * (len(errors) != 1)}")
    if data.get("stage") == "cuda-tests":
        if data.get("not_run"):
            problems.append(f"{data['not_run']} selected tests without a verdict")
        skipped = (data.get("verdicts") or {}).get("SKIPPED", 0)
        if skipped and not data.get("dry_run"):  # on a GPU a skipped cuda test is one not checked
            problems.append(f"{skipped} cuda tests skipped")
    if data.get("pytest_exit"):
        problems.append(data["pytest_exit"])
    line["status"] = "passed" if not problems else "failed: " + "; ".join(problems)
    return line


def write_summary(out: Path, budget: float | None = None, seconds: float | None = None) -> dict:
    """summary.json from stages.jsonl (one line a stage, written by check.sh: exit, seconds, box or
    the reason it was skipped) and each stage's JSON."""
    launches = [json.loads(line) for line in (out / "stages.jsonl").read_text().splitlines() if line.strip()]
    stages = []
    for launch in launches:
        path = out / f"{launch['stage'].replace('-', '_')}.json"
        try:
            data = json.loads(path.read_text()) if path.is_file() else None
        except json.JSONDecodeError:
            data = None
        stages.append(judge_stage(launch, data))
    ran = [s for s in stages if not s.get("status", "").startswith("skipped")]
    summary = {"budget_seconds": budget, "seconds": seconds, "out": str(out),
               "passed": bool(ran) and all(s["status"] == "passed" for s in ran),
               "row_errors": sum(s.get("row_errors", 0) for s in stages), "stages": stages}
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    return summary


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stage", choices=[*STAGES, "summary"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=120.0, help="this stage's own time box")
    parser.add_argument("--budget", type=float, default=None, help="summary: the whole check's budget")
    parser.add_argument("--dry-run", action="store_true", help="CPU, toy sizes: proves the stage runs")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.stage == "summary":
        started = os.environ.get("LENEX_CHECK_STARTED")
        summary = write_summary(out, args.budget, time.time() - float(started) if started else None)
        print(json.dumps(summary, indent=1))
        raise SystemExit(0 if summary["passed"] else 1)
    deadline = Deadline(args.seconds)
    if args.dry_run:
        device = torch.device("cpu")
    elif torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        raise SystemExit("no CUDA device: run with --dry-run on a CPU machine")
    env = out / "env.json"
    peak = json.loads(env.read_text()).get("peak_flops") if env.is_file() else None
    if args.stage == "env":
        record = stage_env(out, device, args.dry_run, deadline)
    elif args.stage == "cuda-tests":
        record = stage_cuda_tests(out, device, args.dry_run, deadline)
    elif args.stage == "bench":
        record = stage_bench(out, device, args.dry_run, deadline, peak)
    elif args.stage == "train-eval":
        record = stage_train_eval(out, device, args.dry_run, deadline, peak)
    else:
        record = stage_segmented_memory(out, device, args.dry_run, deadline)
    raise SystemExit(1 if record.data["row_errors"] or record.data["status"] != "complete" else 0)


if __name__ == "__main__":
    main()
