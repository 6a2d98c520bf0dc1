"""Position schemes: formulas against hand computations, relative schemes' translation invariance."""

import math

import pytest
import torch

from lenex.positions.t5 import T5Options

from lenex.positions import (
    POSITIONS,
    TableCache,
    alibi_slopes,
    build_position,
    contiguous_positions,
    fit_log_curve,
    interpolate_position_table,
    run_of,
    sandwich_bias,
    t5_relative_bucket,
    xpos_zeta,
)

SIZES = dict(d_model=32, n_heads=4, head_dim=8, train_length=16)
RELATIVE = [("rope", {}), ("xpos", {}), ("xpos", {"zeta": "scalar"}), ("xpos", {"rotation": False}),
            ("alibi", {}), ("sandwich", {}), ("smoothed_sandwich", {}), ("kerple", {}), ("t5", {})]


def build(name, options=None, **sizes):
    torch.manual_seed(0)
    return build_position(name, options or {}, **{**SIZES, **sizes})


def logits(scheme, q, k, positions):
    q, k = scheme.rotate(q, k, positions, positions)
    out = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    bias = scheme.bias(positions, positions)
    return out if bias is None else out + bias


def test_registry_has_exactly_the_named_schemes():
    assert set(POSITIONS) == {"none", "learned", "sinusoidal", "rope", "xpos", "alibi", "sandwich",
                              "smoothed_sandwich", "kerple", "t5"}


def test_alibi_slopes_power_of_two_and_not():
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    # H = 12: the 8 slopes of H = 8, then slopes 0, 2, 4, 6 (0-indexed) of H = 16, i.e. 2^-(k/2), k = 1, 3, 5, 7.
    expected = [2.0**-k for k in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
    torch.testing.assert_close(alibi_slopes(12), torch.tensor(expected))


def test_alibi_shift_and_same_h():
    torch.testing.assert_close(alibi_slopes(4, shift=1), torch.tensor([2.0**-3, 2.0**-5, 2.0**-7, 2.0**-9]))
    assert alibi_slopes(4, same_h=0).tolist() == [1.0] * 4
    assert alibi_slopes(3, same_h=3).tolist() == [0.125] * 3


def test_alibi_slope_scale_keeps_slope_times_train_length():
    # slope_scale s multiplies every slope, on top of a shift: 4 heads, s = 4, Delta = 1.
    torch.testing.assert_close(alibi_slopes(4, shift=1, slope_scale=4),
                               torch.tensor([2.0**-1, 2.0**-3, 2.0**-5, 2.0**-7]))
    # The dimensionless product slope x L_tr at L_tr = 256 with s = 4 is the paper's at L_tr = 1024.
    torch.testing.assert_close(alibi_slopes(4, slope_scale=4) * 256, alibi_slopes(4) * 1024)
    bias = build("alibi", {"slope_scale": 2.0}).bias(torch.tensor([3]), torch.tensor([0]))
    torch.testing.assert_close(bias.flatten(), -2 * 3 * alibi_slopes(4))
    with pytest.raises(ValueError, match="slope_scale must be positive"):
        build("alibi", {"slope_scale": 0})


def test_sandwich_distance_scale_reads_the_profile_at_scaled_distances():
    from lenex.positions.sandwich import sandwich_profile
    # s = 2: the bias at distance 3 is the published bias at distance 6.
    scaled = build("sandwich", {"distance_scale": 2.0}).bias(torch.tensor([3]), torch.tensor([0]))
    plain = build("sandwich").bias(torch.tensor([6]), torch.tensor([0]))
    torch.testing.assert_close(scaled, plain)
    # By hand, dbar = 4 at distance 1 read at s = 3: cos(3/100) + cos(3/10000) - 2.
    expected = math.cos(3 / 100) + math.cos(3 / 10000) - 2
    assert sandwich_profile(torch.tensor([1]), dbar=4, distance_scale=3.0).item() == pytest.approx(expected)
    smoothed = build("smoothed_sandwich", {"distance_scale": 2.0}).bias(torch.tensor([3]), torch.tensor([0]))
    torch.testing.assert_close(smoothed, build("smoothed_sandwich").bias(torch.tensor([6]), torch.tensor([0])))
    for name in ("sandwich", "smoothed_sandwich"):
        with pytest.raises(ValueError, match="distance_scale must be positive"):
            build(name, {"distance_scale": -1})


def test_alibi_bias_is_minus_slope_times_distance():
    bias = build("alibi").bias(torch.tensor([5]), torch.tensor([0, 2, 5]))
    slopes = alibi_slopes(4).view(4, 1, 1)
    torch.testing.assert_close(bias, -slopes * torch.tensor([[5.0, 3.0, 0.0]]))


def test_t5_buckets_by_hand():
    # n >= 16: 16 + floor(16 * ln(n / 16) / ln(128 / 16)), clamped to 31.
    distances = [0, 1, 15, 16, 20, 64, 127, 128, 1000]
    expected = [0, 1, 15, 16, 17, 26, 31, 31, 31]  # 20: 16+floor(1.72); 64: 16+floor(10.67); 127: 16+floor(15.94)
    assert t5_relative_bucket(-torch.tensor(distances)).tolist() == expected
    assert t5_relative_bucket(torch.tensor([3])).tolist() == [0]  # key after the query: finite, bucket 0
    # the workstation's miniature (4 buckets, max_distance 16): n >= 2 -> 2 + floor(2 ln(n / 2) / ln 8)
    assert t5_relative_bucket(-torch.tensor([0, 1, 2, 5, 6, 15, 16, 64]), 4, 16).tolist() == [0, 1, 2, 2, 3, 3, 3, 3]


@pytest.mark.parametrize("options", [{"max_distance": 16}, {"num_buckets": 4, "max_distance": 2}, {"num_buckets": 1}])
def test_t5_buckets_need_room_for_their_log_range(options):
    with pytest.raises(ValueError, match="position scheme 't5': option max_distance"):
        T5Options(**options)


def test_sandwich_bias_by_hand():
    bias = sandwich_bias(5, n_heads=2, dbar=4)
    assert bias.shape == (2, 5, 5)
    assert torch.all(bias.diagonal(dim1=-2, dim2=-1) == 0)
    torch.testing.assert_close(bias, bias.transpose(-1, -2))
    # dbar = 4: sum over i = 1, 2 of cos(1 / 10000^(2i/4)), minus 2; h = 4, 8 for H = 2.
    profile = math.cos(1 / 100) + math.cos(1 / 10000) - 2
    torch.testing.assert_close(bias[:, 3, 2], torch.tensor([profile / 4, profile / 8]))
    assert torch.all(sandwich_bias(8, n_heads=8).diagonal(dim1=-2, dim2=-1) == 0)


def test_sandwich_module_matches_the_full_matrix_at_gapped_positions():
    for name in ("sandwich", "alibi", "t5", "kerple", "smoothed_sandwich"):
        scheme = build(name)
        dense = scheme.bias(torch.arange(21), torch.arange(21))
        idx = torch.tensor([0, 5, 6, 20])
        torch.testing.assert_close(scheme.bias(idx, idx), dense[:, idx][:, :, idx])
    torch.testing.assert_close(build("sandwich").bias(torch.arange(9), torch.arange(9)), sandwich_bias(9, 4))


def test_fit_log_curve_recovers_a_known_curve_and_smoothed_sandwich_uses_it():
    d = torch.arange(50)
    assert fit_log_curve(d, -0.5 * torch.log1p(d.double()) + 0.25) == pytest.approx((-0.5, 0.25))
    # Hand check of one head (H = 1, so h = 8): least squares on distances 0..49 with lstsq.
    i = torch.arange(1, 65, dtype=torch.float64)
    target = (torch.cos(d.double()[:, None] / 10000 ** (2 * i / 128)).sum(-1) - 64) / 8
    design = torch.stack((torch.log1p(d.double()), torch.ones(50, dtype=torch.float64)), dim=1)
    a, b = torch.linalg.lstsq(design, target[:, None]).solution.flatten().tolist()
    bias = build("smoothed_sandwich", n_heads=1).bias(torch.tensor([100]), torch.tensor([100, 97, 0]))
    expected = torch.tensor([[[b, a * math.log(4) + b, a * math.log(101) + b]]], dtype=torch.float32)
    torch.testing.assert_close(bias, expected)


def test_xpos_zeta_by_hand():
    torch.testing.assert_close(xpos_zeta(8), torch.tensor([0.4, 0.65, 0.9, 1.15]) / 1.4)


def direct_rotary(x, positions, zeta=None, centre=0.0, sign=1.0, base=10000.0, scale_base=512):
    """Eq. (12) in float64 with explicit loops; pair j = channels (j, j + hd/2)."""
    x, out = x.double(), torch.empty(x.shape, dtype=torch.float64)
    half = x.shape[-1] // 2
    for t, n in enumerate(positions.tolist()):
        for j in range(half):
            angle = n * base ** (-2 * j / (2 * half))
            scale = 1.0 if zeta is None else float(zeta[j]) ** (sign * (n - centre) / scale_base)
            x1, x2 = x[..., t, j], x[..., t, j + half]
            out[..., t, j] = (x1 * math.cos(angle) - x2 * math.sin(angle)) * scale
            out[..., t, j + half] = (x2 * math.cos(angle) + x1 * math.sin(angle)) * scale
    return out


def test_rope_and_xpos_rotations_match_the_formula():
    q, k = torch.randn(1, 2, 3, 8), torch.randn(1, 2, 3, 8)
    positions = torch.tensor([0, 3, 11])
    rq, rk = build("rope").rotate(q, k, positions, positions)
    torch.testing.assert_close(rq.double(), direct_rotary(q, positions))
    torch.testing.assert_close(rk.double(), direct_rotary(k, positions))
    xq, xk = build("xpos").rotate(q, k, positions, positions)
    zeta = xpos_zeta(8, dtype=torch.float64)
    torch.testing.assert_close(xq.double(), direct_rotary(q, positions, zeta, centre=5.5))
    torch.testing.assert_close(xk.double(), direct_rotary(k, positions, zeta, centre=5.5, sign=-1.0))


@pytest.mark.parametrize("name,options", RELATIVE)
def test_relative_schemes_are_translation_invariant(name, options):
    scheme = build(name, options)
    q, k = torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)
    positions = torch.tensor([0, 3, 4, 9, 10, 17])
    near, far = logits(scheme, q, k, positions), logits(scheme, q, k, positions + 1000)
    torch.testing.assert_close(near, far, atol=2e-4, rtol=1e-4)
    assert not torch.allclose(near, logits(scheme, q, k, positions * 2), atol=1e-3)  # positions matter


def test_xpos_stays_finite_over_65536_positions():
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 65536, 8), torch.randn(1, 1, 65536, 8)
    positions = torch.arange(65536)
    xq, xk = build("xpos", head_dim=8, n_heads=1).rotate(q, k, positions, positions)
    assert torch.isfinite(xq).all() and torch.isfinite(xk).all()
    zeta = xpos_zeta(8, dtype=torch.float64)
    for n, m in [(65535, 65535), (65535, 65530), (65535, 64000), (40000, 39990), (1, 0), (300, 0)]:
        got = (xq[0, 0, n] @ xk[0, 0, m]).item()
        want = (direct_rotary(q[..., n:n + 1, :], torch.tensor([n]), zeta)
                @ direct_rotary(k[..., m:m + 1, :], torch.tensor([m]), zeta, sign=-1.0).transpose(-1, -2)).item()
        assert got == pytest.approx(want, rel=1e-4, abs=1e-4)


def test_xpos_ablations_change_only_what_they_name():
    q, k, positions = torch.randn(1, 1, 4, 8), torch.randn(1, 1, 4, 8), torch.tensor([0, 1, 2, 600])
    flat_q, flat_k = build("xpos", {"rotation": False}).rotate(q, k, positions, positions)
    scale = xpos_zeta(8, dtype=torch.float64) ** ((positions.double() - 300) / 512).unsqueeze(-1)
    torch.testing.assert_close(flat_q, q * torch.cat((scale, scale), -1).float())
    sq, _ = build("xpos", {"zeta": "scalar", "rotation": False}).rotate(q, k, positions, positions)
    torch.testing.assert_close(sq, q * (0.4 / 1.4) ** ((positions.float() - 300) / 512).view(4, 1))


def test_interpolation_by_hand():
    table = torch.randn(4, 3)
    stretched = interpolate_position_table(table, 8)
    torch.testing.assert_close(stretched[0::2], table)
    torch.testing.assert_close(stretched[1:6:2], (table[:-1] + table[1:]) / 2)
    torch.testing.assert_close(stretched[7], table[3])  # e_{L_t} := e_{L_t - 1}
    quad = interpolate_position_table(table, 16)
    torch.testing.assert_close(quad[5], 0.75 * table[1] + 0.25 * table[2])
    with pytest.raises(ValueError, match="1.5"):
        interpolate_position_table(table, 6)


def test_learned_table_refuses_long_inputs_unless_interpolated():
    trained = build("learned")
    with pytest.raises(ValueError, match="position 16 .*size 16"):
        trained.embed(torch.arange(17))
    extended = build("learned", {"interpolate_to": 32})
    extended.load_state_dict(trained.state_dict())  # a checkpoint trained without interpolation loads
    out = extended.embed(torch.arange(32))
    torch.testing.assert_close(out[0::2], trained.table.weight)
    with pytest.raises(ValueError, match="position 32"):
        extended.embed(torch.tensor([32]))
    with pytest.raises(ValueError, match="integral"):
        build("learned", {"interpolate_to": 24})


def test_embeddings_batched_and_by_hand():
    assert build("learned").embed(torch.arange(4).expand(3, 4)).shape == (3, 4, 32)
    sinus = build("sinusoidal", d_model=4).embed(torch.tensor([[1, 40000]]))
    expected = torch.tensor([math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]) / 2
    torch.testing.assert_close(sinus[0, 0], expected)
    assert sinus.shape == (1, 2, 4)
    none = build("none")
    q = torch.randn(1, 1, 2, 8)
    assert none.embed(torch.arange(2)) is None and none.bias(torch.arange(2), torch.arange(2)) is None
    assert none.rotate(q, q, torch.arange(2), torch.arange(2))[0] is q


@pytest.mark.parametrize("name", ["alibi", "sandwich", "smoothed_sandwich", "kerple", "t5"])
def test_batched_positions_give_one_bias_per_sequence(name):
    scheme = build(name)
    positions = torch.tensor([[0, 1, 2, 3], [10, 12, 30, 31]])
    bias = scheme.bias(positions, positions)
    assert bias.shape == (2, 4, 4, 4)
    torch.testing.assert_close(bias[1], scheme.bias(positions[1], positions[1]))


def test_kerple_parameters_stay_positive():
    scheme = build("kerple")
    with torch.no_grad():
        scheme.raw_r1.fill_(-5.0)
        scheme.raw_r2.fill_(-5.0)
    assert (scheme.r1 > 0).all() and (scheme.r2 > 0).all()
    bias = scheme.bias(torch.arange(6), torch.arange(6))
    assert torch.isfinite(bias).all() and (bias <= 0).all() and (bias[:, 5, 0] < 0).all()
    bias.sum().backward()
    assert (scheme.raw_r1.grad != 0).all() and (scheme.raw_r2.grad != 0).all()


def test_unknown_names_and_options_are_named():
    with pytest.raises(ValueError, match="'rotary'.*alibi"):
        build("rotary")
    with pytest.raises(ValueError, match="'xpos'.*'gama'.*gamma"):
        build("xpos", {"gama": 0.5})
    with pytest.raises(ValueError, match="'vectorial'"):
        build("xpos", {"zeta": "vectorial"})
    with pytest.raises(ValueError, match="'kerple'.*unknown option 'r1'; known: none"):
        build("kerple", {"r1": 1.0})  # a scheme without options keeps the base class's NoOptions


# Position-table cache: cached tables must be the uncached ones, bit for bit.

CACHED = [("rope", {}), ("xpos", {}), ("xpos", {"rotation": False}), ("alibi", {}), ("sandwich", {}),
          ("smoothed_sandwich", {}), ("kerple", {}), ("t5", {})]


def rotate_and_bias(scheme, q_pos, k_pos, dtype=torch.float32):
    generator = torch.Generator().manual_seed(3)
    q = torch.randn(2, 4, len(q_pos), 8, generator=generator, dtype=dtype)
    k = torch.randn(2, 4, len(k_pos), 8, generator=generator, dtype=dtype)
    return (*scheme.rotate(q, k, q_pos, k_pos), scheme.bias(q_pos, k_pos))


def assert_same(got, expected):
    for a, b in zip(got, expected, strict=True):
        assert (a is None and b is None) or torch.equal(a, b)


@pytest.mark.parametrize("name,options", CACHED)
def test_cached_position_tables_equal_uncached_ones(name, options):
    scheme = build(name, options)
    runs = (contiguous_positions(10, 14), contiguous_positions(5, 14))  # a cache-window step: 4 queries, 9 keys
    first = rotate_and_bias(scheme, *runs)
    assert len(scheme.tables) > 0
    again = rotate_and_bias(scheme, contiguous_positions(10, 14), contiguous_positions(5, 14))  # from the cache
    scheme.tables.enabled = False
    fresh = rotate_and_bias(scheme, torch.arange(10, 14), torch.arange(5, 14))
    assert_same(first, fresh)
    assert_same(again, fresh)


@pytest.mark.parametrize("name", ["alibi", "sandwich", "t5", "kerple"])
def test_relative_tables_are_shared_by_shifted_runs_and_stay_exact(name):
    scheme = build(name)
    scheme.bias(contiguous_positions(0, 6), contiguous_positions(0, 6))
    entries = len(scheme.tables)
    shifted = scheme.bias(contiguous_positions(40, 46), contiguous_positions(40, 46))  # same q - k: a hit
    assert len(scheme.tables) == entries
    scheme.tables.enabled = False
    assert torch.equal(shifted, scheme.bias(torch.arange(40, 46), torch.arange(40, 46)))


@pytest.mark.parametrize("name", ["rope", "xpos", "alibi"])
def test_explicit_positions_with_gaps_are_never_cached(name):
    scheme = build(name)
    gaps = torch.tensor([0, 1, 4, 5, 9])
    got = rotate_and_bias(scheme, gaps, gaps)
    assert len(scheme.tables) == 0
    scheme.tables.enabled = False
    assert_same(got, rotate_and_bias(scheme, gaps, gaps))


def test_rotation_tables_are_kept_apart_by_dtype_and_dropped_on_to():
    scheme = build("xpos")
    run = contiguous_positions(0, 7)
    q32, k32, _ = rotate_and_bias(scheme, run, run, torch.float32)
    q64, k64, _ = rotate_and_bias(scheme, run, run, torch.float64)
    assert q32.dtype == torch.float32 and q64.dtype == torch.float64
    assert len(scheme.tables) == 2
    scheme.to(torch.float64)
    assert len(scheme.tables) == 0
    scheme.tables.enabled = False
    assert_same((q32, k32), rotate_and_bias(scheme, run, run, torch.float32)[:2])
    assert_same((q64, k64), rotate_and_bias(scheme, run, run, torch.float64)[:2])


def test_learned_bias_keeps_its_gradient_through_the_cache():
    scheme = build("kerple")
    run = contiguous_positions(0, 5)
    scheme.bias(run, run)  # fills the cache
    scheme.bias(run, run).sum().backward()
    assert scheme.raw_r1.grad is not None and scheme.raw_r1.grad.abs().sum() > 0


def test_table_cache_is_a_bounded_lru_that_refuses_big_tables():
    cache = TableCache(capacity=2, max_elements=10)
    builds = []

    def table(n):
        return lambda: builds.append(n) or torch.zeros(n)

    cache.get(("a",), table(3))
    cache.get(("b",), table(4))
    cache.get(("a",), table(3))  # hit: "a" becomes the most recent
    cache.get(("c",), table(5))  # evicts "b"
    cache.get(("b",), table(4))  # rebuilt
    assert builds == [3, 4, 5, 4]
    cache.get(("big",), table(11))
    cache.get(("big",), table(11))  # never stored: built twice
    assert builds[-2:] == [11, 11] and len(cache) == 2
    with torch.inference_mode():
        cache.get(("a",), table(3))  # inference tensors get their own entry
    assert builds[-1] == 3


def test_only_marked_runs_have_a_run():
    assert run_of(contiguous_positions(3, 8)) == (3, 5)
    assert run_of(torch.arange(3, 8)) is None
    assert run_of(contiguous_positions(3, 8)[1:]) is None  # a slice is another tensor
