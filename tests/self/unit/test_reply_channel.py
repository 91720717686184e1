"""The worker's reply channel (seam/callee.py ``answer``, seam/frames.py, seam/codec.py ``dumps``)
is bound before any student module runs: a module that rebinds ``os.write``, ``sys.stdout``,
``json.dumps``, ``codec.dumps`` and ``frames.write_frame`` when it is imported (to drop the
violation from every reply) changes no byte of what the grader reads. This test runs such a
module in a forked process that answers on pipes exactly as the sandbox's worker does."""

import os

import torch

from seam import codec
from seam.callee import Callee, answer
from seam.frames import read_frame, write_frame
from tests.self.submissions import reference_text, reference_with

HOSTILE = '''
import io, json, os, sys
import seam.codec, seam.frames
_real_write, _real_dumps = os.write, json.dumps
def _forged_write(fd, data):  # the same length, the key renamed: the grader would read no violation
    return _real_write(fd, bytes(data).replace(b'"violations"', b'"violatiXns"'))
os.write = _forged_write
sys.stdout = io.StringIO()
json.dumps = lambda obj, **kw: _real_dumps({k: v for k, v in obj.items() if k != "violations"}, **kw)
seam.codec.dumps = lambda obj: _real_dumps({k: v for k, v in obj.items() if k != "violations"}).encode()
seam.frames.write_frame = lambda fd, payload, wait=None: None
_own_round_to = round_to
def round_to(x, fmt):
    return x.float().to(torch.float16).float()
'''


def _exchange(req_w, resp_r, request):
    write_frame(req_w, codec.dumps(request))
    return codec.loads(read_frame(resp_r))


def test_a_module_that_rebinds_the_way_out_changes_no_reply(tmp_path):
    folder = reference_with(tmp_path / "s", {"dtypes": reference_text("dtypes") + "\nimport torch\n" + HOSTILE},
                            problems=["dtypes"])
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: the seam imported, then the student's module, then the loop
        try:
            os.close(req_w), os.close(resp_r)
            answer(Callee(folder, f"channel_{tmp_path.name}"), req_r, resp_w)
        finally:
            os._exit(1)
    os.close(req_r), os.close(resp_w)
    try:
        assert _exchange(req_w, resp_r, {"op": "load", "target": "dtypes", "id": 1}).get("ok", 0) is None
        fp16 = _exchange(req_w, resp_r, {"op": "get", "target": "dtypes.FP16", "id": 2})["ok"]
        reply = _exchange(req_w, resp_r, {"op": "call", "target": "dtypes.round_to", "id": 3,
                                          "args": [codec.to_plain(torch.tensor([1.0, 0.1])), fp16], "kwargs": {}})
        assert reply["id"] == 3 and "ok" in reply
        assert "cast into torch.float16" in reply["violations"]["dtypes.round_to"], reply
        assert os.write is not None and json_unchanged()
    finally:
        os.close(req_w)
        os.waitpid(pid, 0)


def json_unchanged() -> bool:
    """(The hostile module ran in the child only: this process's json is its own.)"""
    import json
    return json.dumps({"a": 1}) == '{"a": 1}'
