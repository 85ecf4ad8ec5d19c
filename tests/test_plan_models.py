"""Model descriptions and chip figures for the planner."""

import pytest

from netsim.errors import InputError
from netsim.planning import load_model, model_names
from netsim.topology import parse_topology


@pytest.mark.parametrize("name, total, active", [
    ("llama3-8b", 8.0e9, 8.0e9),            # published: 8B
    ("llama3-70b", 70.6e9, 70.6e9),         # 70B (config: 70.55B)
    ("llama3-405b", 405e9, 405e9),          # 405B
    ("gpt3-175b", 175e9, 175e9),            # 175B
    ("mixtral-8x7b", 46.7e9, 12.9e9),       # 46.7B total, 12.9B active (arXiv:2401.04088)
    ("deepseek-v3", 671e9, 37e9),           # 671B total, 37B activated (arXiv:2412.19437)
])
def test_parameter_counts_match_published(name, total, active):
    m = load_model(name)
    assert m.params == pytest.approx(total, rel=0.015)
    assert m.active_params == pytest.approx(active, rel=0.015)


def test_flops_per_token_is_six_n_plus_attention():
    m = load_model("gpt3-175b")
    # 6 N (tied embeddings: the LM head is the embedding) + 12 L s h
    expected = 6 * m.params + 12 * 96 * 2048 * 12288
    assert m.flops_per_token() == pytest.approx(expected)
    # the attention term is a few percent of 6N at 2K tokens (Kaplan et al.'s rule)
    assert m.flops_per_token() / (6 * m.params) == pytest.approx(1.0, abs=0.03)


def test_shipped_models_have_sources():
    assert len(model_names()) >= 6
    for name in model_names():
        assert all(s.strip() for s in load_model(name).sources)


def test_user_model_file_errors_are_one_line(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("name: x\nlayers: 0\nhidden: 64\nheads: 4\nffn: 256\nvocab: 100\n"
                    "seq_len: 128\nsources: [me]\n")
    with pytest.raises(InputError, match=r"m\.yaml: layers: .*greater than or equal to 1"):
        load_model(path)
    path.write_text("name: x\nlayers: 2\nhidden: 64\nheads: 4\nffn: 256\nvocab: 100\n"
                    "seq_len: 128\nsources: [me]\nexperts_: 3\n")
    with pytest.raises(InputError, match="experts_: unknown field"):
        load_model(path)
    with pytest.raises(InputError, match="unknown model 'llama9'"):
        load_model("llama9")


@pytest.mark.parametrize("preset", ["dgx-h100", "dgx-h100-cluster", "dgx-a100", "dgx-b200",
                                    "gb200-nvl72", "galaxy-wh", "galaxy-wh-quad", "galaxy-bh",
                                    "t3000"])
def test_presets_carry_chip_figures(preset):
    chip = parse_topology(preset).meta["chip"]
    assert chip["bf16"] > 1e13 and chip["memory"] > 1e9 and chip["memory_bandwidth"] > 1e11
    assert chip["source"]
    # FP8, where the chip has it, is twice (NVIDIA) or more (Tenstorrent) the BF16 rate
    assert chip["fp8"] is None or chip["fp8"] >= 2 * chip["bf16"] * 0.99
