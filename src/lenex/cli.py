"""Entry-point wrapper: bad input ends with one line naming what is wrong, not a traceback."""

from __future__ import annotations

import sys

# Errors that mean "your input is wrong"; anything else is a bug and keeps its traceback.
USER_ERRORS = (ValueError, KeyError, OSError, RuntimeError)


def run_cli(main, argv=None) -> None:
    """Run main(argv); a user error exits with status 2 after one `error: ...` line."""
    try:
        main(argv)
    except USER_ERRORS as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        _end_progress_bars()
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def _end_progress_bars() -> None:
    """Close open tqdm bars, which ends their line, so the error line is not glued to a bar's
    last `\r` update in a log."""
    try:
        from tqdm import tqdm
    except ImportError:
        return
    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


def add_scoring_inputs(parser, length_help: str, max_tokens: int = 65536) -> None:
    """What every scorer reads: a checkpoint, a prepared corpus split, the length to score at,
    how many tokens to score and how many go through the model at once."""
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--data", required=True, help="prepared corpus directory")
    parser.add_argument("--length", type=int, required=True, help=length_help)
    parser.add_argument("--split", default="test")
    parser.add_argument("--max-tokens", type=int, default=max_tokens,
                        help="score at most this many tokens" + (" (0: all)" if max_tokens == 0 else ""))
    parser.add_argument("--batch-tokens", type=int, default=16384)


def add_run_options(parser, extra_help: str = "JSON merged into the result (e.g. variant, corpus)",
                    device: bool = True) -> None:
    """The options every model-running entry point shares: --threads, --device (with the attention
    kernel), --extra, --out."""
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    if device:
        from .model.kernels import add_kernel_option

        parser.add_argument("--device", default="auto", help="auto (GPU if any), cpu, cuda ...")
        add_kernel_option(parser)
    parser.add_argument("--extra", default="{}", help=extra_help)
    parser.add_argument("--out", required=True)


def start_run(args) -> None:
    """How every model-running entry point begins: INFO logging to stderr, torch's thread count, the
    attention kernel."""
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if getattr(args, "attention_kernel", None):
        from .model.kernels import set_default_kernel

        set_default_kernel(args.attention_kernel)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
