"""netsim plan refuses bad input with one line saying what and why, and exit status 2."""

import pytest

from netsim.cli import main

SMALL = ("name: small\nlayers: 6\nhidden: 1536\nheads: 12\nkv_heads: 4\nffn: 6144\n"
         "vocab: 32000\nseq_len: 2048\nsources: [test]\n")


@pytest.mark.parametrize("args, text", [
    # a layout that does not divide the chips
    (["llama3-8b", "--layout", "tp=3"], "tp x cp x ep x pp = 3 does not divide the 8 chips"),
    (["llama3-8b", "--layout", "tp=4,dp=4"], "multiply to 16, not to the 8 chips"),
    # ... or the model
    (["SMALL", "--layout", "tp=8"], "tp=8 does not divide the 12 attention heads"),
    (["SMALL", "--layout", "pp=8"], "pp=8 stages for the 6 layers"),
    (["SMALL", "--layout", "tp=2,pp=4,vp=4"], "16 model chunks for the 6 layers"),
    (["SMALL", "--layout", "ep=8"], "ep=8 needs routed experts"),
    (["llama3-8b", "--batch", "12", "--layout", "dp=8"], "batch 12 does not split"),
    # a model that fits nowhere: no layout of 8 GPUs holds 405B parameters and Adam
    (["llama3-405b"], "llama3-405b fits no layout of 8 chips"),
    # (weights, gradients and Adam state alone: 16 B x 8.0e9 = 119 GiB > 0.9 x 80 GB)
    (["llama3-8b", "--layout", "dp=8,zero=0"], "GiB per chip; H100 SXM5 80GB has 67.1 GiB"),
    # a machine without compute figures
    (["llama3-8b", "--topo", "dgxcluster:nodes=1"], "no chip: block"),
    # an unknown model or file
    (["llama3-8x"], "unknown model 'llama3-8x': did you mean 'llama3-8b'?"),
    (["missing.yaml"], "model file 'missing.yaml' does not exist"),
    (["llama3-8b", "--chips", "16"], "--chips 16: the planner uses every chip"),
])
def test_bad_input_is_one_line_and_exit_2(args, text, tmp_path, capsys):
    small = tmp_path / "small.yaml"
    small.write_text(SMALL)
    args = [str(small) if a == "SMALL" else a for a in args]
    argv = ["plan", *args]
    if "--topo" not in argv:
        argv += ["--topo", "dgx-h100"]
    if "--batch" not in argv:
        argv += ["--batch", "16"]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    assert text in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_no_batch_is_one_line_naming_the_option(capsys):
    """The global batch sets the micro-batches and so every layout's pipeline: there is
    no default that fits every model, so a plan without it stops at once, in one line."""
    with pytest.raises(SystemExit) as exit_:
        main(["plan", "llama3-8b", "--topo", "dgx-h100"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "Missing option '--batch'" in err and "netsim plan --help" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
