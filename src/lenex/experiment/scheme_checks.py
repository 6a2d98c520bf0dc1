"""A bring-your-own position scheme tried on a few positions before anything trains with it
(issue 51): a `bias` of the wrong shape failed at step 1 with a raw tensor-size message naming
neither the scheme nor the shape it should return. Called where the extra schemes are resolved
(lenex.experiment.schemes.resolve_entries, when the DAG is built)."""

from __future__ import annotations

# Small, distinct sizes: a bias that mixes up heads, queries and keys cannot pass by accident.
PROBE = {"n_heads": 2, "head_dim": 4, "queries": 3, "keys": 5}


def bias_shape_problem(shape, n_heads: int, queries: int, keys: int) -> str | None:
    """Why a bias of `shape` cannot be added to (H, Tq, Tk) attention logits, or None."""
    wanted = (n_heads, queries, keys)
    if tuple(shape) == wanted:
        return None
    return (f"its bias(q_pos, k_pos) returned shape {tuple(shape)}; it should return (H, Tq, Tk) = {wanted} "
            f"for {n_heads} heads, {queries} query and {keys} key positions")


def check_scheme(name: str, position: str, options: dict | None = None) -> None:
    """Build the registered scheme `position` with `options` on a toy model and call its bias on
    3 query and 5 key positions: one ValueError naming the entry and the shape it should return."""
    import torch

    from ..positions import POSITIONS
    from ..positions.base import make_options

    cls = POSITIONS[position]
    heads, head_dim = PROBE["n_heads"], PROBE["head_dim"]
    try:
        built = make_options(position, cls.Options, options)
    except ValueError as err:
        raise ValueError(f"extra_schemes.{name}: {err}") from None
    sizes = {"d_model": heads * head_dim, "n_heads": heads, "head_dim": head_dim, "max_length": 64}
    try:
        cls.check_sizes(**sizes)
    except ValueError:
        return  # a scheme that refuses the toy's sizes is tried at its models' own (check_model_once)
    scheme = cls(built, **sizes)
    q_pos = torch.arange(PROBE["keys"] - PROBE["queries"], PROBE["keys"])
    k_pos = torch.arange(PROBE["keys"])
    bias = scheme.bias(q_pos, k_pos)
    if bias is None:
        return
    problem = bias_shape_problem(bias.shape, heads, PROBE["queries"], PROBE["keys"])
    if problem:
        raise ValueError(f"extra_schemes.{name}: position scheme {position!r} ({cls.__module__}): {problem}")
