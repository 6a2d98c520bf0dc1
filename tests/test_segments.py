"""Segment samplers (segmented-sequences paper, Section 3.1) and APE interpolation (Section 3.2)."""

import numpy as np
import pytest
import torch

from lenex.positions import interpolate_position_table
from lenex.segmented.segments import (Method, SegmentBatches, as_batch, chunk_positions, parse_method, prefix_positions,
                            sample_segments)

L_T, L_E = 32, 128


def piece(length=L_E):
    # Token = 1000 + original position, so a token reveals where it came from.
    return np.arange(length, dtype=np.int64) + 1000


@pytest.mark.parametrize("alpha", [0.125, 0.25, 0.5])
@pytest.mark.parametrize("extended", [64, 128])
def test_chunk_keeps_original_positions_no_overlap_exactly_lt(alpha, extended):
    for seed in range(50):
        s = sample_segments(piece(extended), Method("chunk", alpha), L_T, np.random.default_rng(seed))
        assert len(s.tokens) == L_T
        np.testing.assert_array_equal(s.tokens, s.positions + 1000)  # original positions kept
        assert np.all(np.diff(s.positions) > 0)  # in order, never overlapping
        assert s.positions.min() >= 0 and s.positions.max() < extended
        seg = int(alpha * L_T)
        runs = s.positions.reshape(-1, seg)
        assert len(runs) == round(1 / alpha)
        np.testing.assert_array_equal(np.diff(runs, axis=1), 1)  # each segment is contiguous
        assert s.loss_on[1:].all() and not s.loss_on[0]


def test_chunk_covers_every_placement():
    # Over many draws every position of L_e is used, including the very first and last.
    seen = np.zeros(L_E, dtype=bool)
    rng = np.random.default_rng(0)
    for _ in range(300):
        seen[chunk_positions(rng, L_T, L_E, 0.25)] = True
    assert seen.all()


@pytest.mark.parametrize("alpha", [0.25, 0.5])
def test_prefix_suffix_contiguous_loss_on_suffix_only(alpha):
    suffix = int(alpha * L_T)
    prefix = L_T - suffix
    starts = set()
    for seed in range(200):
        s = sample_segments(piece(), Method("prefix", alpha), L_T, np.random.default_rng(seed))
        assert len(s.tokens) == L_T
        np.testing.assert_array_equal(s.tokens, s.positions + 1000)
        assert np.all(np.diff(s.positions) > 0)
        start = s.positions[prefix]
        starts.add(int(start))
        assert prefix < start < L_E - suffix  # the paper's bounds on i
        np.testing.assert_array_equal(s.positions[prefix:], start + np.arange(suffix))
        assert s.positions[:prefix].max() < start
        # Loss only on predictions inside the suffix: targets suffix[1:].
        expected = np.zeros(L_T, dtype=bool)
        expected[prefix + 1:] = True
        np.testing.assert_array_equal(s.loss_on, expected)
    rng = np.random.default_rng(1)
    starts |= {int(prefix_positions(rng, L_T, L_E, alpha)[0][prefix]) for _ in range(3000)}
    assert min(starts) == prefix + 1 and max(starts) == L_E - suffix - 1  # both bounds reachable


def test_prefix_loss_mask_in_batch_covers_suffix_targets():
    s = sample_segments(piece(), Method("prefix", 0.25), L_T, np.random.default_rng(3))
    batch = as_batch([s])
    targets = batch["y"][0][batch["loss_mask"][0]]
    suffix_start = s.positions[L_T - 8]
    np.testing.assert_array_equal(targets.numpy() - 1000, suffix_start + np.arange(1, 8))
    np.testing.assert_array_equal(batch["positions"][0].numpy(), s.positions[:-1])


def test_full_is_whole_sequence():
    s = sample_segments(piece(64), Method("full"), L_T, np.random.default_rng(0))
    np.testing.assert_array_equal(s.positions, np.arange(64))
    assert s.loss_on.sum() == 63


def test_parse_method_and_errors():
    assert parse_method("chunk-0.125") == Method("chunk", 0.125)
    assert parse_method("prefix-0.5").name == "prefix-0.5"
    assert parse_method("full").name == "full"
    with pytest.raises(ValueError, match="unknown segment method 'chunky-1'"):
        parse_method("chunky-1")
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        parse_method("chunk-1.5")
    with pytest.raises(ValueError, match="not a whole number of tokens"):
        chunk_positions(np.random.default_rng(0), 30, 60, 0.25)
    with pytest.raises(ValueError, match="too short"):
        prefix_positions(np.random.default_rng(0), 32, 33, 0.25)


def test_batches_seeded_per_step_and_epochs_visit_every_piece():
    pieces = np.stack([piece() + 10_000 * i for i in range(10)])
    batches = SegmentBatches(pieces, Method("chunk", 0.25), L_T, batch_size=3, seed=5)
    assert batches.steps_per_epoch == 3 and batches.steps(4) == 12
    a, b = batches(4), batches(4)
    for key in a:
        assert torch.equal(a[key], b[key])
    assert a["x"].shape == (3, L_T - 1) and a["loss_mask"].dtype == torch.bool
    seen = {int(batches(s)["x"][row, 0]) // 10_000 for s in range(3) for row in range(3)}
    assert len(seen) == 9  # one epoch: 9 distinct pieces (the tenth is the dropped remainder)
    assert not torch.equal(batches(0)["positions"], batches(3)["positions"])  # next epoch: new draws


def test_interpolation_reproduces_table_at_multiples_and_matches_formula():
    torch.manual_seed(0)
    table = torch.randn(8, 5, dtype=torch.float64)
    for beta in (2, 3, 4):
        new = interpolate_position_table(table, 8 * beta)
        assert new.shape == (8 * beta, 5)
        torch.testing.assert_close(new[::beta], table)  # e'_{kβ} = e_k
        for i in range(8 * beta):  # the paper's formula, term by term, with e_{L_t} = e_{L_t - 1}
            low, frac = i // beta, i % beta
            high = min(low + 1, 7)
            expected = (beta - frac) / beta * table[low] + frac / beta * table[high]
            torch.testing.assert_close(new[i], expected)
    # by hand: beta = 2, rows (0, 2, 4) -> (0, 1, 2, 3, 4, 4)
    hand = interpolate_position_table(torch.tensor([[0.0], [2.0], [4.0]]), 6)
    assert hand.flatten().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 4.0]
    with pytest.raises(ValueError, match="integral ratio"):
        interpolate_position_table(table, 12)
