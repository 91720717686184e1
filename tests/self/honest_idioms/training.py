"""Idioms in training.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "pathlib.Path for the checkpoint path, its folder made if missing",
        "students handle paths with pathlib and make the checkpoint's folder before saving",
        (("import os\n", "import os\nfrom pathlib import Path\n"),
         ('''    torch.save(checkpoint, path)
''', '''    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(checkpoint, path)
'''),
         ('''    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
''', '''    checkpoint = torch.load(Path(path), map_location="cpu", weights_only=True)
'''))),
    Idiom(
        "os.environ.get reading a debug flag that turns on prints",
        "students switch their debugging output on from the shell instead of editing the file",
        (("import os\n", 'import os\n\nDEBUG = os.environ.get("CS336_DEBUG", "") == "1"\n'),
         ('''    loss = _mse(model, x, y)
    loss.backward()
''', '''    loss = _mse(model, x, y)
    if DEBUG:
        print(f"train_step: loss {loss.item():.6f}")
    loss.backward()
'''))),
    Idiom(
        "a contextlib.contextmanager around torch.autocast",
        "students wrap the mixed-precision set-up in a context manager of their own",
        (("import os\n", "import contextlib\nimport os\n"),
         ('''def bf16_train_step(''', '''@contextlib.contextmanager
def bf16_autocast(device_type: str):
    """The forward pass's bf16 autocast (notes 001)."""
    with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
        yield


def bf16_train_step('''),
         ('''    with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
        loss = _mse(model, x, y)
''', '''    with bf16_autocast(device_type):
        loss = _mse(model, x, y)
'''))),
]
